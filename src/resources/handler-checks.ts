/**
 * The registration errors of a handler that destructures a name it never gets: a resource's `read`
 * naming what its URI template lacks (or SDK v1's `(uri, variables)`), a prompt's `get` naming what
 * its `args` lack.
 */
import type { ResourceContext } from "../context.js";
import { destructuredNames, headsOf } from "./handler-params.js";

/**
 * The keys `fn` destructures without a default that `allowed` lacks, with all it destructures;
 * undefined when they fit or cannot be read. A key with a default (`{ version = "latest" }`) is
 * one the handler is ready to miss: a read shared by `docs://{id}` and `docs://{id}/v/{version}`.
 */
function unknownNames(
  fn: unknown,
  allowed: readonly string[],
): { unknown: string[]; keys: readonly string[] } | undefined {
  const names = destructuredNames(fn);
  if (names === undefined) return undefined;
  const unknown = names.keys.filter((k) => !allowed.includes(k) && !names.defaults.includes(k));
  return unknown.length === 0 ? undefined : { unknown, keys: names.keys };
}

/** Names a read's context has (not SDK v1's): one per key of {@link ResourceContext}, as its type says, so it cannot drift. */
const CONTEXT_KEY_RECORD: { readonly [K in keyof ResourceContext]-?: true } = {
  uri: true,
  signal: true,
  requestId: true,
  client: true,
  meta: true,
  auth: true,
  sessionId: true,
  clientAddress: true,
  features: true,
  progress: true,
  log: true,
  elicit: true,
  sample: true,
  roots: true,
  sessionState: true,
  requestState: true,
  setRequestState: true,
  task: true,
  get: true,
  set: true,
  cache: true,
  personal: true,
  notify: true,
  end: true,
  caller: true,
};
const CONTEXT_KEYS: ReadonlySet<string> = new Set(Object.keys(CONTEXT_KEY_RECORD));

/** `{a, b}`: a set of names as the registration errors print it. */
const nameSet = (names: readonly string[]) => `{${names.join(", ")}}`;

/** "is"/"it" or "are"/"them". */
const verbs = (n: number) => (n > 1 ? (["are", "them"] as const) : (["is", "it"] as const));

/**
 * Throws when a resource's `read` destructures a name that its template lacks (`users://{user_id}`
 * with `({ user })`), which would be undefined on every read. `variables` is undefined for a static URI.
 */
export function checkReadParams(uri: string, variables: readonly string[] | undefined, read: unknown): void {
  const v1 = variables && headsOf(read).second;
  // SDK v1's read took (uri, variables): its variables in the second place, where the context is here
  if (v1 && v1.keys.length > 0 && v1.keys.every((k) => variables.includes(k) && !CONTEXT_KEYS.has(k)))
    throw new TypeError(
      `Resource ${uri}: read takes the URI's variables first and the context second (SDK v1's callback took (uri, variables)): write read: ({ ${v1.keys.join(", ")} }, ctx) => …, with ctx.uri for the URI read`,
    );
  const bad = unknownNames(read, variables ?? []);
  if (!bad) return;
  const head = `Mismatch between URI parameters ${nameSet(variables ?? [])} and read parameters ${nameSet(bad.keys)} of resource ${uri}`;
  const [is, it] = verbs(bad.unknown.length);
  const missing = bad.unknown.join(", ");
  if (!variables)
    throw new TypeError(
      `${head}: a URI without {variables} gives read no parameters, so ${missing} would always be undefined. Write read: () => … (the context is the second argument), or put {${bad.unknown[0]}} in the URI to make it a template`,
    );
  throw new TypeError(
    `${head}: ${missing} ${is} not ${is === "is" ? "a variable" : "variables"} of the template, so read would get undefined. Rename ${it} in read to ${is === "is" ? "a variable" : "variables"} of the URI (${variables.join(", ")}), or rename the variable${is === "is" ? "" : "s"} in the URI`,
  );
}

/** Throws when a prompt's `get` destructures a name that is not one of its `args`. */
export function checkGetParams(name: string, args: readonly string[], get: unknown): void {
  const bad = unknownNames(get, args);
  if (!bad) return;
  const [is, it] = verbs(bad.unknown.length);
  throw new TypeError(
    `Mismatch between prompt arguments ${nameSet(args)} and get parameters ${nameSet(bad.keys)} of prompt "${name}": ${bad.unknown.join(", ")} ${is} not in args, so get would get undefined. Rename ${it} in get to an argument${args.length ? ` (${args.join(", ")})` : ""}, or add ${it} to args`,
  );
}
