/**
 * What every registry shares: the server's options they read, as one frozen record (`ServerSettings`:
 * a new option of this kind is declared, defaulted and read here and where it is used, nowhere
 * between); an ordered, named registry whose changes are announced to connected clients; who may use
 * its entries; and one page of them.
 */

import { type Listed, listingFor } from "./eras/serialize.js";
import { type CacheHint, type CacheOptions, cacheHint, listHint } from "./eras/stateless.js";
import type { Features } from "./eras/versions.js";
import { ErrorCode, McpError } from "./errors.js";
import { listResult, pageSizeOf } from "./pagination.js";
import type { JsonSchemaValidator } from "./schema/schema.js";

/** Limits applied by `parseUriTemplate`; every field is optional. */
export interface UriTemplateLimits {
  /** Longest template accepted, in UTF-16 code units; longer throws at registration. Default 1024. */
  readonly maxTemplateLength?: number;
  /** Longest URI `match` looks at; a longer URI does not match (`match` returns null). Default 8192. */
  readonly maxUriLength?: number;
  /** Most variables in one template; more throws at registration. Default 32. */
  readonly maxVariables?: number;
}

/** The options of `new McpServer(...)` that its registries read: how tools, resources and prompts are made and listed. */
export interface RegistryOptions {
  /** Items per page of every list result. Default: 2000 (few round trips for a client that lists everything; see docs/resources.md). */
  pageSize?: number;
  /**
   * Path safety for resource template variables: a decoded value with a `..` that escapes, an absolute
   * path, a drive letter or a NUL byte never reaches `read` (the read answers "not found"). A resource
   * can turn it off (`pathSafety: false`) or exempt variables (`unsafe: ["path"]`). Default: true.
   */
  pathSafety?: boolean;
  /** Limits of resource URI templates: `maxTemplateLength` (1024), `maxVariables` (32), `maxUriLength` (8192). */
  uriTemplateLimits?: UriTemplateLimits;
  /** Validates tools' plain JSON Schema `input` / `output` (ajv, …; see docs/tools.md). Default: picomcp's own. */
  jsonSchemaValidator?: JsonSchemaValidator;
  /**
   * 2026-07-28 caching hints of `server/discover` and of every registration without its own `cache`.
   * Default: `{ ttlMs: 0, scope: "private" }` (immediately stale, never shared between callers).
   */
  cache?: CacheOptions;
}

/** @internal — {@link RegistryOptions} checked and defaulted, frozen: what the registries and built-ins are given. */
export interface ServerSettings {
  readonly pageSize: number;
  readonly pathSafety: boolean;
  readonly uriTemplateLimits: UriTemplateLimits;
  /** Undefined: picomcp's own. */
  readonly jsonSchemaValidator: JsonSchemaValidator | undefined;
  /** The hint of a registration without its own `cache`, and of `server/discover`. */
  readonly cache: CacheHint;
}

/** @internal — the settings of a server given `options`; throws on a mistake (a `pageSize` of 0, a negative `ttlMs`). */
export function settingsOf(options: RegistryOptions): ServerSettings {
  return Object.freeze({
    pageSize: pageSizeOf(options.pageSize),
    pathSafety: options.pathSafety ?? true,
    uriTemplateLimits: options.uriTemplateLimits ?? {},
    jsonSchemaValidator: options.jsonSchemaValidator,
    cache: cacheHint(options.cache),
  });
}

/** @internal — every option at its default: for a registry made outside a server. */
export const DEFAULT_SETTINGS: ServerSettings = settingsOf({});

/** Entries in registration order, by name; `onChange` runs after every add and remove. */
export class Registry<T> {
  readonly #items = new Map<string, T>();
  #list: T[] | undefined;
  readonly #what: string;
  readonly #onChange: () => void;
  /** Checks run before an entry is added, each throwing to refuse it (a mount's: the name must be free where this server is mounted too). */
  readonly guards = new Set<(name: string) => void>();

  constructor(what: string, onChange: () => void) {
    this.#what = what;
    this.#onChange = onChange;
  }

  /** Adds an entry; a duplicate name is a programming error. Returns the remover. */
  add(name: string, item: T): () => void {
    for (const guard of this.guards) guard(name);
    if (this.#items.has(name)) throw new Error(`A ${this.#what} named "${name}" is already registered`);
    this.#items.set(name, item);
    this.#list = undefined;
    this.#onChange();
    return () => {
      if (this.#items.get(name) !== item) return;
      this.#items.delete(name);
      this.#list = undefined;
      this.#onChange();
    };
  }

  get(name: string): T | undefined {
    return this.#items.get(name);
  }

  get size(): number {
    return this.#items.size;
  }

  /** All entries in registration order (cached until the next change). */
  values(): readonly T[] {
    this.#list ??= [...this.#items.values()];
    return this.#list;
  }
}

/** What a registered primitive may declare about who can use it. */
export interface Scoped {
  /** The OAuth scopes a caller needs, all of them; undefined: anyone. */
  readonly scopes: readonly string[] | undefined;
}

/** An OAuth scope token (RFC 6749 §3.3): printable ASCII without spaces, quotes or backslashes. */
export function isScopeToken(s: unknown): s is string {
  return typeof s === "string" && /^[\x21\x23-\x5B\x5D-\x7E]+$/.test(s);
}

/** The `scopes` option of a registration, checked: a list of scope tokens (no spaces); empty means none. */
export function scopesOption(owner: string, scopes: unknown): readonly string[] | undefined {
  if (scopes === undefined) return undefined;
  if (!Array.isArray(scopes) || !scopes.every(isScopeToken))
    throw new TypeError(`${owner}: scopes must be a list of OAuth scope names, without spaces or quotes`);
  if (scopes.includes("offline_access"))
    throw new TypeError(`${owner}: offline_access is a grant for refresh tokens, not a scope to require`);
  return scopes.length ? Object.freeze([...new Set(scopes as string[])]) : undefined;
}

/** Whether a caller with `auth` holds every scope an entry needs. A caller without credentials holds none. */
export function permits(entry: Scoped, auth: { readonly scopes?: readonly string[] } | undefined): boolean {
  if (!entry.scopes) return true;
  const granted = auth?.scopes;
  // only a list counts: "notes:write" as a string would contain "notes"
  return Array.isArray(granted) && entry.scopes.every((s) => granted.includes(s));
}

/** What scope checks need of a request: its caller's scopes, and where to say the answer depends on them. */
export interface ScopedRequest {
  readonly auth: { readonly scopes?: readonly string[] } | undefined;
  personal(): void;
}

/** Refuses a caller that lacks an entry's scopes; HTTP with `picomcp/auth` answers it with a 403 challenge. */
export function requireScopes(what: string, entry: Scoped, ctx: ScopedRequest): void {
  // what only some callers may read is never cached as public
  if (entry.scopes) ctx.personal();
  if (permits(entry, ctx.auth)) return;
  const scopes = entry.scopes!;
  throw new McpError(
    ErrorCode.InvalidRequest,
    `Forbidden: ${what} needs the scope${scopes.length > 1 ? "s" : ""} ${scopes.join(" ")}`,
    { error: "insufficient_scope", scopes: [...scopes] },
  );
}

const anyScoped = new WeakMap<readonly Scoped[], boolean>();

/**
 * The entries a caller may use. When any entry has scopes the answer depends on who asks, and
 * `ctx.personal()` is called so that it is never cached as public.
 */
export function visibleTo<T extends Scoped>(entries: readonly T[], ctx: ScopedRequest): readonly T[] {
  let scoped = anyScoped.get(entries);
  if (scoped === undefined) {
    // the registries keep one array per version of their contents: decided once per change
    scoped = entries.some((e) => e.scopes);
    anyScoped.set(entries, scoped);
  }
  if (!scoped) return entries;
  ctx.personal();
  return entries.filter((e) => permits(e, ctx.auth));
}

/** What listing needs of a request: its revision, its caller, and where its caching hint goes. */
export interface ListingRequest extends ScopedRequest {
  readonly features: Features;
  cache(hint: CacheHint): void;
}

/**
 * One page of `entries` under `key` (`tools/list`, `prompts/list`, `resources/templates/list`): the
 * ones the caller may see, shaped for its revision, `settings.pageSize` of them; at 2026-07-28 with
 * the list's caching hint (`settings.cache` when the list is empty).
 */
export function listPage<T extends Scoped & Listed & { readonly cache: CacheHint }>(
  key: string,
  entries: readonly T[],
  params: { cursor?: unknown },
  ctx: ListingRequest,
  settings: Pick<ServerSettings, "pageSize" | "cache">,
): { [key: string]: unknown } {
  if (ctx.features.stateless) ctx.cache(listHint(entries, settings.cache));
  return listResult(key, visibleTo(entries, ctx), params.cursor, settings.pageSize, (e) =>
    listingFor(e, ctx.features),
  );
}
