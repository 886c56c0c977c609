/**
 * The 2026-07-28 codec: a request carries its own revision, capabilities and client in `_meta`
 * (read here into a `ClientView`-shaped record), and every result carries `resultType`, the
 * server's identity and, where the method is cacheable, `ttlMs`/`cacheScope`.
 */
import { ErrorCode, McpError } from "../errors.js";
import {
  type ClientCapabilities,
  type Implementation,
  isObject,
  type JsonRpcErrorObject,
  type LoggingLevel,
  type Params,
} from "../types.js";
import type { InputRound } from "./input.js";
import { type Features, revision, SUPPORTED_VERSIONS } from "./versions.js";

/** The reserved `_meta` keys of 2026-07-28. */
export const META = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  clientInfo: "io.modelcontextprotocol/clientInfo",
  logLevel: "io.modelcontextprotocol/logLevel",
  serverInfo: "io.modelcontextprotocol/serverInfo",
  subscriptionId: "io.modelcontextprotocol/subscriptionId",
} as const;

/** How long and how widely a 2026-07-28 client may cache a result. */
export interface CacheHint {
  /** Milliseconds the result stays fresh; 0 means immediately stale. Default: 0. */
  readonly ttlMs: number;
  /** `"public"` only for data that is the same for every caller. Default: `"private"`. */
  readonly cacheScope: "public" | "private";
}

/** What a registration or the server may say about caching; unset fields fall back. */
export interface CacheOptions {
  /** Default: the server's `cache.ttlMs`, else 0. */
  ttlMs?: number;
  /** Default: the server's `cache.scope`, else `"private"`. */
  scope?: "public" | "private";
}

/** The safe default: immediately stale, never shared between callers. */
/** A hint this module made and checked (frozen): `ctx.cache` of a registration's hint then checks nothing per request. */
class Checked implements CacheHint {
  readonly ttlMs: number;
  readonly cacheScope: "public" | "private";
  constructor(ttlMs: number, cacheScope: "public" | "private") {
    this.ttlMs = ttlMs;
    this.cacheScope = cacheScope;
    Object.freeze(this);
  }
}

export const PRIVATE_NO_CACHE: CacheHint = new Checked(0, "private");

/** A frozen hint from `options` over `fallback`; throws on a negative or fractional ttl (a programming mistake). */
export function cacheHint(
  options: CacheOptions | undefined,
  fallback: CacheHint = PRIVATE_NO_CACHE,
): CacheHint {
  if (options === undefined) return fallback;
  const ttlMs = options.ttlMs ?? fallback.ttlMs;
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 0) throw new RangeError("cache.ttlMs must be an integer >= 0");
  const scope = options.scope ?? fallback.cacheScope;
  if (scope !== "public" && scope !== "private")
    throw new TypeError('cache.scope must be "public" or "private"');
  return ttlMs === fallback.ttlMs && scope === fallback.cacheScope ? fallback : new Checked(ttlMs, scope);
}

/** `hint` when it is a valid one (a registration's, say), else a throw as {@link cacheHint}'s. */
export function checkedHint(hint: CacheHint): CacheHint {
  if (!Number.isSafeInteger(hint.ttlMs) || hint.ttlMs < 0)
    throw new RangeError("cache.ttlMs must be an integer >= 0");
  if (hint.cacheScope !== "public" && hint.cacheScope !== "private")
    throw new TypeError('cache.scope must be "public" or "private"');
  return hint;
}

/** The hint `ctx.cache` was given (options, or a hint as registrations keep it), checked: a bad one throws. */
export function hintOf(hint: CacheOptions | CacheHint): CacheHint {
  if (hint instanceof Checked) return hint;
  return "cacheScope" in hint ? checkedHint(hint) : cacheHint(hint);
}

/** The hint of a list of entries: the shortest ttl, and public only when every entry is. */
export function combineHints(hints: Iterable<CacheHint>, empty: CacheHint): CacheHint {
  let ttlMs = Number.POSITIVE_INFINITY;
  let allPublic = true;
  let any = false;
  for (const h of hints) {
    any = true;
    if (h.ttlMs < ttlMs) ttlMs = h.ttlMs;
    if (h.cacheScope !== "public") allPublic = false;
  }
  if (!any) return empty;
  return new Checked(ttlMs, allPublic ? "public" : "private");
}

const listHints = new WeakMap<readonly object[], CacheHint>();

/** The hint of a registry's list (`entries` is its cached array, so this is computed once per change). */
export function listHint(entries: readonly { readonly cache: CacheHint }[], empty: CacheHint): CacheHint {
  let hint = listHints.get(entries);
  if (hint === undefined) {
    hint = combineHints(
      entries.map((e) => e.cache),
      empty,
    );
    listHints.set(entries, hint);
  }
  return hint;
}

/** One 2026-07-28 request's view of its client, read from `_meta`. */
export interface StatelessMeta {
  /** The request's revision (`io.modelcontextprotocol/protocolVersion`), one picomcp serves statelessly. */
  readonly features: Features;
  /** `io.modelcontextprotocol/clientCapabilities`. */
  readonly capabilities: ClientCapabilities;
  /** `io.modelcontextprotocol/clientInfo`, when given. */
  readonly info: Implementation | undefined;
  /** The lowest level to send; undefined: no log messages at all for this request. */
  readonly logLevel: LoggingLevel | undefined;
}

/** Log levels, least to most severe (both eras: `logging/setLevel`, and a request's `_meta`). */
export const LOG_LEVELS: readonly LoggingLevel[] = Object.freeze([
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
]);

/** `level` when it names a log level; otherwise -32602 naming them. */
export function logLevelOf(level: unknown): LoggingLevel {
  if (typeof level !== "string" || !LOG_LEVELS.includes(level as LoggingLevel))
    throw new McpError(ErrorCode.InvalidParams, `Invalid log level: use one of ${LOG_LEVELS.join(", ")}`, {
      level,
    });
  return level as LoggingLevel;
}

/** Whether `meta` speaks 2026-07-28: it names a protocol version or client capabilities. */
export function hasStatelessMeta(meta: unknown): boolean {
  return (
    isObject(meta) &&
    (Object.hasOwn(meta, META.protocolVersion) || Object.hasOwn(meta, META.clientCapabilities))
  );
}

/**
 * Reads the per-request `_meta` of a 2026-07-28 request: a missing version or capabilities is
 * -32602, a revision picomcp does not serve statelessly is -32022 naming the ones it does.
 */
export function readStatelessMeta(meta: unknown): StatelessMeta {
  if (!isObject(meta) || !Object.hasOwn(meta, META.protocolVersion)) {
    throw new McpError(ErrorCode.InvalidParams, `Invalid params: _meta must carry "${META.protocolVersion}"`);
  }
  const requested = meta[META.protocolVersion];
  if (typeof requested !== "string") {
    throw new McpError(ErrorCode.InvalidParams, `Invalid params: "${META.protocolVersion}" must be a string`);
  }
  const caps = Object.hasOwn(meta, META.clientCapabilities) ? meta[META.clientCapabilities] : undefined;
  if (!isObject(caps)) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Invalid params: _meta must carry "${META.clientCapabilities}" (an object; {} declares none)`,
    );
  }
  const features = revision(requested);
  if (!features?.stateless) {
    throw new McpError(ErrorCode.UnsupportedProtocolVersion, `Unsupported protocol version: ${requested}`, {
      supported: SUPPORTED_VERSIONS,
      requested,
    });
  }
  const info = Object.hasOwn(meta, META.clientInfo) ? meta[META.clientInfo] : undefined;
  const level = Object.hasOwn(meta, META.logLevel) ? meta[META.logLevel] : undefined;
  return {
    features,
    capabilities: caps as ClientCapabilities,
    info: isObject(info) ? (info as unknown as Implementation) : undefined,
    logLevel: level === undefined ? undefined : logLevelOf(level),
  };
}

/** -32021: the request needs a capability its `_meta` did not declare (`required`, e.g. `{ sampling: {} }`). */
export function missingCapability(required: ClientCapabilities): McpError {
  const names = Object.keys(required).join(", ");
  return new McpError(
    ErrorCode.MissingRequiredClientCapability,
    `Missing required client capability: ${names}`,
    { requiredCapabilities: required },
  );
}

/** 2026-07-28 retired -32002: a missing resource is -32602 with the URI. */
export function statelessError(error: JsonRpcErrorObject): JsonRpcErrorObject {
  return error.code === ErrorCode.ResourceNotFound ? { ...error, code: ErrorCode.InvalidParams } : error;
}

/** The `_meta` every 2026-07-28 result carries, built once per server. */
export function serverInfoMeta(info: Implementation): { readonly [key: string]: unknown } {
  return Object.freeze({ [META.serverInfo]: Object.freeze({ name: info.name, version: info.version }) });
}

/**
 * A complete 2026-07-28 result: `resultType`, the hint of a cacheable method, and the server's
 * identity merged into whatever `_meta` the handler gave.
 */
export function completeResult(
  result: { [key: string]: unknown },
  serverMeta: { readonly [key: string]: unknown },
  hint: CacheHint | undefined,
  personal = false,
): { [key: string]: unknown } {
  const own = result._meta;
  const out: { [key: string]: unknown } = { resultType: "complete", ...result };
  if (hint) {
    out.ttlMs = hint.ttlMs;
    // a result filtered or guarded by the caller's scopes is never shared between callers
    out.cacheScope = personal ? "private" : hint.cacheScope;
  }
  out._meta = isObject(own) ? { ...own, ...serverMeta } : serverMeta;
  // a result that names the server itself keeps that (`server/discover`: the whole Implementation)
  if (isObject(own) && Object.hasOwn(own, META.serverInfo))
    (out._meta as { [key: string]: unknown })[META.serverInfo] = own[META.serverInfo];
  return out;
}

/** @internal — what a 2026-07-28 request brings: its log level and, where it may ask for input, its round. */
export interface StatelessRequest {
  readonly logLevel: LoggingLevel | undefined;
  readonly input: InputRound | undefined;
  readonly complete: (result: Params, hint: CacheHint | undefined, personal: boolean) => Params;
}
