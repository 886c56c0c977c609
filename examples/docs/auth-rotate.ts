import type { AuthorizationServer } from "picomcp/auth";

declare const authorizationServer: AuthorizationServer;

// a new signing key every week: it signs from now on, and the old one keeps verifying (and stays in the
// JWKS) until the last access token it signed has expired. With a shared store, one replica is enough.
// (A timer waits at most about 24.8 days: for a longer period, check daily and rotate when it is due.)
const WEEK = 7 * 24 * 3600 * 1000;
setInterval(async () => {
  const kid = await authorizationServer.rotateKeys();
  console.log(`signing with key ${kid}`);
}, WEEK);

// someone left the team: every grant of theirs, on every client, at once
export async function offboard(subject: string) {
  await authorizationServer.revoke({ subject });
}

// one client on one device: the grant id is the `gid` claim of its access tokens
export async function signOut(grantId: string) {
  await authorizationServer.revoke({ grant: grantId });
}
