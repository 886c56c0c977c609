// picomcp/auth with jose on this runtime: a token signed here is verified, and no token is challenged.
// Prints "auth: ok" or throws.
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { createProtectedHandler, jwtVerifier } from "../../dist/auth/index.js";
import { McpServer } from "../../dist/index.js";

const RESOURCE = "http://127.0.0.1:3000/mcp";
const ISSUER = "https://as.test";
const server = new McpServer({ name: "auth-check", version: "1.0.0" });
server.tool("whoami", {
  scopes: ["notes:read"],
  run: (_a, ctx) => `${ctx.auth.subject} ${ctx.auth.scopes.join(" ")}`,
});
const keys = [];
const tokens = {};
for (const alg of ["RS256", "ES256", "EdDSA"]) {
  const pair = await generateKeyPair(alg, {
    extractable: true,
    ...(alg === "EdDSA" ? { crv: "Ed25519" } : {}),
  });
  keys.push({ ...(await exportJWK(pair.publicKey)), kid: alg, alg });
  tokens[alg] = await new SignJWT({ iss: ISSUER, aud: RESOURCE, sub: "alice", scope: "notes:read" })
    .setProtectedHeader({ alg, kid: alg, typ: "at+jwt" })
    .setExpirationTime("5m")
    .sign(pair.privateKey);
}
const handle = createProtectedHandler(server, {
  resource: RESOURCE,
  authorizationServers: [ISSUER],
  sessions: false,
  verifyToken: jwtVerifier({ issuer: ISSUER, audience: RESOURCE, jwks: { keys } }),
});
const post = (headers) =>
  handle(
    new Request(RESOURCE, {
      method: "POST",
      headers: {
        host: "127.0.0.1:3000",
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2025-11-25",
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "whoami" } }),
    }),
  );
for (const alg of Object.keys(tokens)) {
  const res = await post({ authorization: `Bearer ${tokens[alg]}` });
  const text = (await res.json()).result?.content?.[0]?.text;
  if (res.status !== 200 || text !== "alice notes:read") throw new Error(`${alg}: ${res.status} ${text}`);
}
const anonymous = await post({});
const challenge = anonymous.headers.get("www-authenticate");
if (anonymous.status !== 401 || !challenge?.startsWith("Bearer resource_metadata=")) {
  throw new Error(`no token: ${anonymous.status} ${challenge}`);
}
console.log("auth: ok");
