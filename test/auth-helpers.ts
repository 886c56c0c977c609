// Helpers of the auth tests: keys made in the test, signed access tokens, and small servers on 127.0.0.1.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from "jose";
import { afterEach } from "vitest";

export type Alg = "RS256" | "ES256" | "EdDSA";

/** A signing key pair and its public JWK (with `kid`, `alg`, `use`). */
export interface TestKey {
  kid: string;
  alg: Alg;
  privateKey: CryptoKey;
  jwk: JWK;
}

export async function makeKey(alg: Alg, kid: string): Promise<TestKey> {
  const pair = await generateKeyPair(alg, {
    extractable: true,
    ...(alg === "EdDSA" ? { crv: "Ed25519" } : {}),
  });
  const jwk = { ...(await exportJWK(pair.publicKey)), kid, alg, use: "sig" };
  return { kid, alg, privateKey: pair.privateKey, jwk };
}

export const now = () => Math.floor(Date.now() / 1000);

/** Signs an access token: `typ` at+jwt, an hour's lifetime, unless the claims or header say otherwise. */
export function sign(
  key: TestKey,
  claims: { [claim: string]: unknown },
  header: { typ?: string | undefined; kid?: string | undefined } = {},
): Promise<string> {
  const h: { alg: string; kid?: string; typ?: string } = { alg: key.alg, kid: header.kid ?? key.kid };
  const typ = "typ" in header ? header.typ : "at+jwt";
  if (typ !== undefined) h.typ = typ;
  return new SignJWT({ iat: now(), exp: now() + 3600, ...claims } as JWTPayload)
    .setProtectedHeader(h)
    .sign(key.privateKey);
}

export const b64url = (data: string | Uint8Array) =>
  Buffer.from(typeof data === "string" ? Buffer.from(data) : data).toString("base64url");

/** A node:http server on 127.0.0.1 serving `listener`; closed after each test. */
export function useHttpServers() {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });
  return async (listener: (req: IncomingMessage, res: ServerResponse) => void) => {
    const server = createServer(listener);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  };
}

/** Serves a key set that the test can change (rotation), counting the fetches. */
export async function jwksServer(listen: ReturnType<typeof useHttpServers>, keys: TestKey[]) {
  const state = { keys, fetches: 0 };
  const { origin } = await listen((_req, res) => {
    state.fetches++;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ keys: state.keys.map((k) => k.jwk) }));
  });
  return Object.assign(state, { url: `${origin}/jwks` });
}
