import { InvalidTokenError, type VerifyToken } from "picomcp/auth";

// an opaque token, checked by the authorization server's introspection endpoint (RFC 7662)
export const verifyToken: VerifyToken = async (token) => {
  const res = await fetch("https://auth.example.com/introspect", {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Basic ${btoa("mcp-server:secret")}`,
    },
    body: new URLSearchParams({ token }),
  });
  if (!res.ok) throw new Error(`introspection failed: ${res.status}`); // → 503, told to onError
  const claims = await res.json();
  if (!claims.active) return undefined; // → 401 invalid_token
  if (![claims.aud].flat().includes("https://mcp.example.com/mcp"))
    throw new InvalidTokenError("not issued for this server");
  return {
    token,
    clientId: claims.client_id,
    scopes: String(claims.scope ?? "")
      .split(" ")
      .filter(Boolean),
    subject: claims.sub,
  };
};
