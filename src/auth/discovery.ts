/** Where an issuer publishes its keys: its authorization server metadata (RFC 8414), or OpenID discovery. */

/** The metadata URLs of `issuer`, in the order they are tried: RFC 8414 (path-inserted), then OpenID Connect. */
export function metadataUrls(issuer: string): URL[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/$/, "");
  return [
    new URL(`${url.origin}/.well-known/oauth-authorization-server${path}`),
    new URL(`${url.origin}${path}/.well-known/openid-configuration`),
  ];
}

/**
 * The `jwks_uri` of `issuer`. A document is only trusted when it names the same issuer (RFC 8414
 * §3.3), so a metadata endpoint cannot hand out someone else's keys.
 */
export async function discoverJwksUri(issuer: string, timeoutMs: number): Promise<URL> {
  const problems: string[] = [];
  for (const url of metadataUrls(issuer)) {
    let doc: { issuer?: unknown; jwks_uri?: unknown };
    try {
      const res = await fetch(url, {
        headers: { accept: "application/json" },
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!res.ok) {
        await res.body?.cancel();
        problems.push(`${url.href}: HTTP ${res.status}`);
        continue;
      }
      doc = await res.json();
    } catch (error) {
      problems.push(`${url.href}: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    if (doc?.issuer !== issuer)
      throw new Error(`${url.href} names the issuer ${JSON.stringify(doc?.issuer)}, not ${issuer}`);
    if (typeof doc.jwks_uri !== "string") throw new Error(`${url.href} has no jwks_uri`);
    return new URL(doc.jwks_uri);
  }
  throw new Error(`No authorization server metadata for ${issuer} (${problems.join("; ")})`);
}
