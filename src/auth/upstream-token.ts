/**
 * The signed-in person's upstream access token, for a tool that acts as them at their identity
 * provider: read from the grant, refreshed through the sign-in when it has expired, saved back.
 */
import type { AuthInfo } from "../connection.js";
import { UPSTREAM, type UpstreamAccess } from "./access-tokens.js";
import type { AsContext } from "./as-context.js";
import type { UpstreamTokens } from "./store.js";

/** Seconds before its expiry that an upstream access token counts as expired (it must last the call). */
const MARGIN_MS = 30_000;

/**
 * The upstream provider's access token of the person behind `auth` (`ctx.auth` of a request verified
 * by the authorization server's `verifyToken`), refreshed when it has expired. It is for the tool to
 * call the provider with; never send it to the MCP client. Throws when `auth` is not from this
 * server's tokens, the grant was revoked, or the sign-in is not federated.
 * @example
 * server.tool("my_repos", {
 *   run: async (_args, ctx) => {
 *     const token = await upstreamToken(ctx.auth);
 *     const res = await fetch("https://api.github.com/user/repos", {
 *       headers: { authorization: `Bearer ${token}` },
 *     });
 *     return JSON.stringify(await res.json());
 *   },
 * });
 */
export function upstreamToken(auth: AuthInfo | undefined): Promise<string> {
  const access = (auth as { [UPSTREAM]?: UpstreamAccess } | undefined)?.[UPSTREAM];
  if (typeof access !== "function")
    return Promise.reject(
      new Error("upstreamToken needs ctx.auth of a token verified by the authorization server's verifyToken"),
    );
  return access();
}

const refreshing = new WeakMap<AsContext, Map<string, Promise<string>>>();

/** @internal — the upstream token of grant `grantId`; one refresh at a time per grant in this process. */
export function upstreamOf(ctx: AsContext, grantId: string): Promise<string> {
  const flights = refreshing.get(ctx) ?? new Map<string, Promise<string>>();
  refreshing.set(ctx, flights);
  const running = flights.get(grantId);
  if (running) return running;
  const p = current(ctx, grantId).finally(() => flights.delete(grantId));
  flights.set(grantId, p);
  return p;
}

async function current(ctx: AsContext, grantId: string): Promise<string> {
  const grant = await ctx.store.getGrant(grantId);
  if (!grant) throw new Error("The sign-in behind this token was revoked");
  const up = grant.upstream;
  if (!up) throw new Error(`This sign-in keeps no upstream token`);
  if (up.expiresAt === undefined || up.expiresAt - MARGIN_MS > Date.now()) return up.accessToken;
  const refresh = ctx.signIn?.refresh;
  if (!refresh || !up.refreshToken)
    throw new Error("The upstream access token has expired and cannot be refreshed");
  const got = await refresh.call(ctx.signIn, up);
  const fresh: UpstreamTokens = { ...got, refreshToken: got.refreshToken ?? up.refreshToken };
  // saved over whatever the grant is now (its refresh token may have rotated meanwhile); when another
  // replica saved a new upstream access token meanwhile, that one is used and nothing is written
  for (let attempt = 0; attempt < 5; attempt++) {
    const now = await ctx.store.getGrant(grantId);
    if (!now) throw new Error("The sign-in behind this token was revoked");
    if (now.upstream && now.upstream.accessToken !== up.accessToken) return now.upstream.accessToken;
    if (await ctx.store.replaceGrant({ ...now, upstream: fresh }, now.refreshHash)) return fresh.accessToken;
  }
  return fresh.accessToken;
}
