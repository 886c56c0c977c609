/**
 * How the authorization server finds out who the person is: the `SignIn` shape that both a team's own
 * `authenticate(request)` hook and a federated identity provider (GitHub, Google, any OIDC issuer) take.
 */
import type { Identity, PendingAuthorization, UpstreamTokens } from "./store.js";

/** Thrown by a `SignIn` when the person could not be signed in; the client gets `access_denied` with its message. */
export class SignInError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SignInError";
  }
}

/** What a `SignIn` gets when the person has approved the client and must now be signed in. */
export interface SignInStart {
  /** The browser's request (its cookies, for a team's own session). */
  readonly request: Request;
  /** The authorization in progress; `pending.signIn` is saved with it after `begin` returns. */
  readonly pending: PendingAuthorization;
  /** The absolute URL of the callback route (`issuer` + `callbackPath`), for an upstream `redirect_uri`. */
  readonly callbackUrl: string;
}

/** What a `SignIn` gets on its callback route. */
export interface SignInCallback {
  readonly request: Request;
  /** Loads the authorization in progress its `state` names (without taking it). */
  load(id: string): Promise<PendingAuthorization | undefined>;
  /** The absolute URL of the callback route, as `begin` had it. */
  readonly callbackUrl: string;
}

/** What `finish` found on the callback route. */
export interface SignInFinished {
  /** The authorization in progress the callback belongs to. */
  pending: PendingAuthorization;
  /** Who signed in. */
  identity: Identity;
  /** `Set-Cookie` values sent with the answer to the callback: a cookie of the sign-in's own, cleared (`Max-Age=0`). */
  setCookie?: readonly string[];
}

/**
 * Who signs people in. `begin` answers the browser: the person's `Identity` at once (a team's own session
 * cookie), or a `Response` that leaves for the provider and comes back to `callbackPath`, where `finish`
 * says which authorization it was and who signed in.
 */
export interface SignIn {
  /** A name for logs and the consent page ("GitHub", "Google", "example.com"). */
  readonly name: string;
  /** The route under the issuer that the provider returns to (`"/oauth/callback"`); none for `begin`s that never leave. */
  readonly callbackPath?: string;
  /** Starts sign-in: the identity now, or the response that sends the browser away. */
  begin(start: SignInStart): Promise<Identity | Response>;
  /** Finishes sign-in on the callback route: the authorization in progress it belongs to, and who signed in. */
  finish?(callback: SignInCallback): Promise<SignInFinished>;
  /** Refreshes the upstream tokens when their access token has expired (federation only). */
  refresh?(tokens: UpstreamTokens): Promise<UpstreamTokens>;
}
