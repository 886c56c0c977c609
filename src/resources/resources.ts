/** The resource registry and the `resources/*` methods. */
import { toResourceContents } from "../content.js";
import type { Completer, RequestContext, ResourceContext } from "../context.js";
import { listingFor, shapePrimitive, shapeResourceContents } from "../eras/serialize.js";
import {
  type CacheHint,
  type CacheOptions,
  cacheHint,
  combineHints,
  PRIVATE_NO_CACHE,
} from "../eras/stateless.js";
import { ErrorCode, McpError } from "../errors.js";
import type { Extension } from "../extension.js";
import { decodeCursor, encodeCursor } from "../pagination.js";
import { listPage, requireScopes, type Scoped, scopesOption, visibleTo } from "../registry.js";
import {
  type Awaitable,
  isPromiseLike,
  type Resource,
  type ResourceContents,
  type ResourceDetails,
} from "../types.js";
import type { UriParams, UriVariableName } from "./params.js";
import { isUnsafePathValue } from "./path-safety.js";
import { TemplateRouter } from "./router.js";
import { parseUriTemplate, type UriTemplate, type UriTemplateLimits, type UriValues } from "./template.js";

/** A concrete resource a template's `list` enumerates. */
export type ListedResource = Resource;

/** Options of `server.resource(uri, options)`. */
export interface ResourceOptions<U extends string> extends ResourceDetails {
  /** Identifier shown to users. Default: the URI. */
  name?: string;
  /** Path safety for this resource's variables. Default: the server's `pathSafety` (on). */
  pathSafety?: boolean;
  /** Variables exempt from path safety (their values may contain `..`, absolute paths, …). */
  unsafe?: readonly UriVariableName<U>[];
  /** OAuth scopes a caller needs (all of them) to see, read and complete this resource or template. Default: none. */
  scopes?: readonly string[];
  /** Templates: enumerates concrete resources into `resources/list`. */
  list?: (ctx: RequestContext) => readonly ListedResource[] | Promise<readonly ListedResource[]>;
  /** 2026-07-28: how long `resources/read` of it (and the lists naming it) may be cached; `"public"` only if every caller reads the same. Default: the server's `cache`. */
  cache?: CacheOptions;
  /** Templates: completion per variable for `completion/complete`. */
  complete?: { [K in UriVariableName<U>]?: Completer };
  /** Reads the resource: the variables of the URI first, the context (with the concrete `uri`) second. */
  read: (params: UriParams<U>, ctx: ResourceContext) => unknown;
}

/** @internal */
export interface ResourceEntry extends Scoped {
  readonly key: string;
  readonly template: UriTemplate | undefined;
  readonly listing: { [key: string]: unknown };
  readonly mimeType: string | undefined;
  readonly unsafe: ReadonlySet<string>;
  readonly pathSafety: boolean;
  readonly options: ResourceOptions<string>;
  readonly shaped: Map<string, object>;
  readonly cache: CacheHint;
}

/** Statics by exact URI, templates through an index; announces changes. */
export class ResourceRegistry {
  readonly #statics = new Map<string, ResourceEntry>();
  readonly #templates = new Map<string, ResourceEntry>();
  readonly #router = new TemplateRouter<ResourceEntry>();
  #staticList: ResourceEntry[] | undefined;
  #templateList: ResourceEntry[] | undefined;
  #listHint: CacheHint | undefined;
  readonly #onChange: () => void;
  readonly #pathSafety: boolean;
  readonly #limits: UriTemplateLimits;
  /** The server's caching default. */
  readonly cache: CacheHint;

  constructor(
    onChange: () => void,
    pathSafety = true,
    limits: UriTemplateLimits = {},
    cache: CacheHint = PRIVATE_NO_CACHE,
  ) {
    this.#onChange = onChange;
    this.#pathSafety = pathSafety;
    this.#limits = limits;
    this.cache = cache;
  }

  add(uri: string, options: ResourceOptions<string>): () => void {
    if (typeof uri !== "string" || uri.length === 0) throw new TypeError("A resource needs a non-empty URI");
    if (typeof options?.read !== "function") throw new TypeError(`Resource ${uri} needs a read function`);
    const parsed = parseUriTemplate(uri, this.#limits);
    const template = parsed.isTemplate ? parsed : undefined;
    const table = template ? this.#templates : this.#statics;
    if (table.has(uri))
      throw new Error(`A resource ${template ? "template" : "URI"} ${uri} is already registered`);
    const listing: { [key: string]: unknown } = template ? { uriTemplate: uri } : { uri };
    listing.name = options.name ?? uri;
    for (const key of ["title", "description", "mimeType", "annotations", "icons", "_meta"] as const) {
      if (options[key] !== undefined) listing[key] = options[key];
    }
    if (!template && options.size !== undefined) listing.size = options.size;
    const entry: ResourceEntry = {
      key: uri,
      template,
      listing,
      mimeType: options.mimeType,
      unsafe: new Set(options.unsafe ?? []),
      pathSafety: options.pathSafety ?? this.#pathSafety,
      options,
      shaped: new Map(),
      scopes: scopesOption(`Resource ${uri}`, options.scopes),
      cache: cacheHint(options.cache, this.cache),
    };
    table.set(uri, entry);
    const unroute = template ? this.#router.add(template, entry) : undefined;
    this.#staticList = this.#templateList = this.#listHint = undefined;
    this.#onChange();
    return () => {
      if (table.get(uri) !== entry) return;
      table.delete(uri);
      unroute?.();
      this.#staticList = this.#templateList = this.#listHint = undefined;
      this.#onChange();
    };
  }

  get size(): number {
    return this.#statics.size + this.#templates.size;
  }

  get templates(): readonly ResourceEntry[] {
    this.#templateList ??= [...this.#templates.values()];
    return this.#templateList;
  }

  get statics(): readonly ResourceEntry[] {
    this.#staticList ??= [...this.#statics.values()];
    return this.#staticList;
  }

  /** 2026-07-28: the hint of `resources/list`, over the statics and the templates (computed once per change). */
  get listHint(): CacheHint {
    this.#listHint ??= combineHints(
      [...this.statics, ...this.templates].map((e) => e.cache),
      this.cache,
    );
    return this.#listHint;
  }

  templateByUri(uriTemplate: string): ResourceEntry | undefined {
    return this.#templates.get(uriTemplate);
  }

  /** The entry serving `uri` and its decoded variables; an exact static URI wins over templates. */
  resolve(uri: string): { entry: ResourceEntry; params: UriValues } | undefined {
    const s = this.#statics.get(uri);
    if (s) return { entry: s, params: {} };
    const m = this.#router.match(uri);
    if (!m) return undefined;
    // path safety: an unsafe value never reaches read, and no later template is tried
    if (m.value.pathSafety) {
      for (const name in m.params) {
        if (!m.value.unsafe.has(name) && isUnsafePathValue(m.params[name]!)) return undefined;
      }
    }
    return { entry: m.value, params: m.params };
  }
}

/** The not-found error as the request's revision spells it. */
export function notFound(uri: string, ctx: RequestContext): McpError {
  // an expected answer, not a bug: skip the stack trace, which costs more than the whole lookup
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new McpError(ctx.features.resourceNotFoundCode, `Resource not found: ${uri}`, { uri });
  } finally {
    Error.stackTraceLimit = limit;
  }
}

const RESOURCES = Object.freeze({ resources: Object.freeze({ subscribe: true, listChanged: true }) });

/**
 * The resources of `reg`: the `resources` capability while any is registered, `resources/list`,
 * `resources/templates/list` and `resources/read`.
 */
export function resourcesExtension(reg: ResourceRegistry, pageSize: number): Extension {
  return {
    id: "picomcp/resources",
    capabilities: () => (reg.size > 0 ? RESOURCES : undefined),
    methods: {
      "resources/list": { run: (p, ctx: RequestContext) => listResources(reg, p, ctx, pageSize) },
      "resources/templates/list": {
        run: (p, ctx: RequestContext) => listResourceTemplates(reg, p, ctx, pageSize),
      },
      "resources/read": { input: true, run: (p, ctx: RequestContext) => readResource(reg, p, ctx) },
    },
  };
}

/**
 * `resources/list`: the statics, then what each template's `list` enumerates, paginated across both.
 * Only the page is shaped, and the templates' `list` runs only for a page that reaches past the statics.
 */
export async function listResources(
  reg: ResourceRegistry,
  params: { cursor?: unknown },
  ctx: RequestContext,
  pageSize: number,
) {
  if (ctx.features.stateless) ctx.cacheHint = reg.listHint;
  const statics = visibleTo(reg.statics, ctx);
  const shape = (e: ResourceEntry) => listingFor(e, ctx.features);
  const start = params.cursor === undefined ? 0 : decodeCursor(params.cursor, Number.MAX_SAFE_INTEGER);
  const end = start + pageSize;
  // more statics follow this page: it holds no enumerated resource, and there is a next one
  if (end < statics.length)
    return { resources: statics.slice(start, end).map(shape), nextCursor: encodeCursor(end) };
  const listed: object[] = [];
  for (const t of visibleTo(reg.templates, ctx)) {
    if (!t.options.list) continue;
    for (const r of await t.options.list(ctx)) {
      const item: { [key: string]: unknown } = { ...r };
      if (item.mimeType === undefined && t.mimeType !== undefined) item.mimeType = t.mimeType;
      listed.push(shapePrimitive(item, ctx.features));
    }
  }
  const total = statics.length + listed.length;
  const from = Math.min(start, total);
  const to = Math.min(end, total);
  const resources: object[] = statics.slice(from, to).map(shape);
  for (const r of listed.slice(Math.max(0, from - statics.length), to - statics.length)) resources.push(r);
  return to < total ? { resources, nextCursor: encodeCursor(to) } : { resources };
}

/** `resources/templates/list`. */
export function listResourceTemplates(
  reg: ResourceRegistry,
  params: { cursor?: unknown },
  ctx: RequestContext,
  pageSize: number,
) {
  return listPage("resourceTemplates", reg.templates, params, ctx, pageSize, reg.cache);
}

/** `resources/read`: never an empty contents array for a missing resource. Synchronous when `read` is. */
export function readResource(
  reg: ResourceRegistry,
  params: { [key: string]: unknown },
  ctx: RequestContext,
): Awaitable<{ contents: ResourceContents[] }> {
  const uri = params.uri;
  if (typeof uri !== "string")
    throw new McpError(ErrorCode.InvalidParams, "resources/read needs a string uri");
  const hit = reg.resolve(uri);
  if (!hit) throw notFound(uri, ctx);
  requireScopes(`resource ${uri}`, hit.entry, ctx);
  ctx.uri = uri;
  ctx.cacheHint = hit.entry.cache;
  const mimeType = hit.entry.mimeType;
  let value: unknown;
  try {
    value = hit.entry.options.read(hit.params as never, ctx);
  } catch (error) {
    throw readFailed(error, uri, ctx);
  }
  if (isPromiseLike(value))
    return Promise.resolve(value).then(
      (v) => ({ contents: shapeResourceContents(toResourceContents(v, uri, mimeType), ctx.features) }),
      (error) => {
        throw readFailed(error, uri, ctx);
      },
    );
  return { contents: shapeResourceContents(toResourceContents(value, uri, mimeType), ctx.features) };
}

/** What a failed `read` throws: a not-found error spelled as the request's revision spells it. */
function readFailed(error: unknown, uri: string, ctx: RequestContext): unknown {
  if (error instanceof McpError && error.code === ErrorCode.ResourceNotFound)
    return new McpError(ctx.features.resourceNotFoundCode, error.message, error.data ?? { uri });
  return error;
}
