/** The resource registry and the `resources/*` methods. */
import { toResourceContents } from "../content.js";
import type { Context, ResourceContext } from "../context.js";
import { listingFor, shapePrimitive, shapeResourceContents } from "../eras/serialize.js";
import { type CacheHint, cacheHint, combineHints } from "../eras/stateless.js";
import { ErrorCode, McpError } from "../errors.js";
import type { Extension } from "../extension.js";
import { preEncode } from "../jsonrpc.js";
import { decodeMarkedCursor, encodeMarkedCursor } from "../pagination.js";
import {
  DEFAULT_SETTINGS,
  listPage,
  permits,
  requireScopes,
  type Scoped,
  type ServerSettings,
  scopesOption,
  visibleTo,
} from "../registry.js";
import { type Awaitable, isPromiseLike, type ResourceContents } from "../types.js";
import { ContextView } from "../views/context-view.js";
import { checkReadParams } from "./handler-params.js";
import { type ResourceOptions, v1ResourceHint } from "./options.js";
import { isUnsafePathValue } from "./path-safety.js";
import { TemplateRouter } from "./router.js";
import { parseUriTemplate, type UriTemplate, type UriValues } from "./template.js";
import { templateShape } from "./template-layout.js";

export type { ListedResource, ResourceOptions } from "./options.js";

/** @internal */
export interface ResourceEntry extends Scoped {
  readonly key: string;
  /** Registration number, rising: a `resources/list` cursor names the static it resumes after. */
  readonly seq: number;
  readonly template: UriTemplate | undefined;
  readonly listing: { [key: string]: unknown };
  readonly mimeType: string | undefined;
  readonly unsafe: ReadonlySet<string>;
  readonly pathSafety: boolean;
  readonly options: ResourceOptions<string>;
  readonly shaped: Map<string, object>;
  readonly cache: CacheHint;
}

/** RFC 3986's scheme and its colon, which every resource URI (and template) starts with. */
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/** One page of `resources/list`. */
export interface ResourcePage {
  resources: object[];
  nextCursor?: string;
}

/** Statics by exact URI, templates through an index; announces changes. */
export class ResourceRegistry {
  readonly #statics = new Map<string, ResourceEntry>();
  readonly #templates = new Map<string, ResourceEntry>();
  readonly #router = new TemplateRouter<ResourceEntry>();
  /** Each template's {@link templateShape} → the template. */
  readonly #shapes = new Map<string, string>();
  #staticList: ResourceEntry[] | undefined;
  #templateList: ResourceEntry[] | undefined;
  #listHint: CacheHint | undefined;
  #seq = 0;
  /** Pages of statics already shaped, by revision and start; emptied by every change. */
  readonly pages = new Map<string, ResourcePage>();
  #scopedStatics: boolean | undefined;
  #enumerates: boolean | undefined;
  readonly #onChange: () => void;
  /** Checks run before a resource is added (its URI, whether it is a template), each throwing to refuse it (see `Registry.guards`). */
  readonly guards = new Set<(uri: string, template: boolean) => void>();
  /** The server's: path safety, template limits, caching default, page size. */
  readonly settings: ServerSettings;

  constructor(onChange: () => void, settings: ServerSettings = DEFAULT_SETTINGS) {
    this.#onChange = onChange;
    this.settings = settings;
  }

  add(uri: string, options: ResourceOptions<string>): () => void {
    const v1 = typeof options?.read === "function" ? "" : v1ResourceHint(uri, options);
    if (v1) throw new TypeError(v1);
    if (typeof uri !== "string" || uri.length === 0) throw new TypeError("A resource needs a non-empty URI");
    if (!SCHEME.test(uri) || /\s/.test(uri))
      throw new TypeError(
        `${JSON.stringify(uri)} is not a URI: a resource URI starts with a scheme (books://…, file:///…, urn:…) and holds no whitespace (percent-encode a space as %20)`,
      );
    if (typeof options?.read !== "function") throw new TypeError(`Resource ${uri} needs a read function`);
    const parsed = parseUriTemplate(uri, this.settings.uriTemplateLimits);
    const template = parsed.isTemplate ? parsed : undefined;
    checkReadParams(uri, template ? template.variables.map((v) => v.name) : undefined, options.read);
    for (const guard of this.guards) guard(uri, template !== undefined);
    const table = template ? this.#templates : this.#statics;
    if (table.has(uri))
      throw new Error(`A resource ${template ? "template" : "URI"} ${uri} is already registered`);
    const shape = template ? templateShape(uri) : undefined;
    const twin = template ? this.taken(uri, true) : undefined;
    if (twin !== undefined)
      throw new Error(
        `The resource template ${uri} matches exactly the URIs of ${twin}, registered before, so it could never be read: remove one, or give one a literal of its own (books://{id} beside books://{id}/reviews)`,
      );
    if (shape !== undefined) this.#shapes.set(shape, uri);
    const listing: { [key: string]: unknown } = template ? { uriTemplate: uri } : { uri };
    listing.name = options.name ?? uri;
    for (const key of ["title", "description", "mimeType", "annotations", "icons", "_meta"] as const) {
      if (options[key] !== undefined) listing[key] = options[key];
    }
    if (!template && options.size !== undefined) listing.size = options.size;
    const entry: ResourceEntry = {
      key: uri,
      seq: this.#seq++,
      template,
      listing,
      mimeType: options.mimeType,
      unsafe: new Set(options.unsafe ?? []),
      pathSafety: options.pathSafety ?? this.settings.pathSafety,
      options,
      shaped: new Map(),
      scopes: scopesOption(`Resource ${uri}`, options.scopes),
      cache: cacheHint(options.cache, this.settings.cache),
    };
    table.set(uri, entry);
    const unroute = template ? this.#router.add(template, entry) : undefined;
    this.#changed();
    return () => {
      if (table.get(uri) !== entry) return;
      table.delete(uri);
      if (shape !== undefined) this.#shapes.delete(shape);
      unroute?.();
      this.#changed();
    };
  }

  /**
   * The URI or template registered already that `uri` would collide with: itself, or (for a template)
   * one that differs only in its variables' names, which matches the same URIs (the one registered
   * first would always win: the second could never be read). Undefined when it is free.
   */
  taken(uri: string, template: boolean): string | undefined {
    if ((template ? this.#templates : this.#statics).has(uri)) return uri;
    return template ? this.#shapes.get(templateShape(uri)) : undefined;
  }

  #changed(): void {
    this.#staticList = this.#templateList = this.#listHint = undefined;
    this.#scopedStatics = this.#enumerates = undefined;
    this.pages.clear();
    this.#onChange();
  }

  /** Whether any static needs scopes (then a page depends on who asks). */
  get scopedStatics(): boolean {
    this.#scopedStatics ??= this.statics.some((e) => e.scopes);
    return this.#scopedStatics;
  }

  /** Whether any template enumerates resources into `resources/list`. */
  get enumerates(): boolean {
    this.#enumerates ??= this.templates.some((e) => e.options.list);
    return this.#enumerates;
  }

  /** Where the statics registered after the one numbered `seq` start in {@link statics}: a binary search. */
  staticsAfter(seq: number): number {
    const list = this.statics;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (list[mid]!.seq <= seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
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
      this.settings.cache,
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

/** What `read` gets: the request's context and the concrete URI asked for (one small object a read). */
class ReadContext extends ContextView implements ResourceContext {
  // assigned in the constructor, not a class field: V8 runs a class's field initializers as a call of their own
  declare readonly uri: string;
  constructor(base: Context, uri: string) {
    super(base);
    this.uri = uri;
  }
}

/** The not-found error as the request's revision spells it. */
export function notFound(uri: string, ctx: Context): McpError {
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
export function resourcesExtension(reg: ResourceRegistry): Extension {
  return {
    id: "picomcp/resources",
    capabilities: () => (reg.size > 0 ? RESOURCES : undefined),
    methods: {
      "resources/list": { run: (p, ctx) => listResources(reg, p, ctx) },
      "resources/templates/list": { run: (p, ctx) => listResourceTemplates(reg, p, ctx) },
      "resources/read": { input: true, run: (p, ctx) => readResource(reg, p, ctx) },
    },
  };
}

/** Cursor marks of `resources/list`: after the static numbered n, or at the n-th enumerated resource. */
const AFTER_STATIC = "s";
const ENUMERATED = "e";
const MARKS = AFTER_STATIC + ENUMERATED;

/**
 * `resources/list`: the statics, then what each template's `list` enumerates, paginated across both.
 * A cursor names the static it resumes after, so that statics added or removed between pages neither
 * repeat nor go missing; it is found by binary search, and a page of statics is shaped once per change
 * (then served as it is), so a page costs O(page) however long the list. The templates' `list` runs only
 * for a page that reaches past the statics.
 */
export async function listResources(
  reg: ResourceRegistry,
  params: { cursor?: unknown },
  ctx: Context,
): Promise<ResourcePage> {
  const pageSize = reg.settings.pageSize;
  ctx.cache(reg.listHint);
  const at = params.cursor === undefined ? undefined : decodeMarkedCursor(params.cursor, MARKS);
  if (at?.mark === ENUMERATED) return enumeratedPage(reg, ctx, [], at.n, pageSize);
  const start = at === undefined ? 0 : reg.staticsAfter(at.n);
  const scoped = reg.scopedStatics;
  const key = `${ctx.features.version} ${start}`;
  if (!scoped) {
    const page = reg.pages.get(key);
    if (page !== undefined) return page;
  } else ctx.personal();
  // one more than a page, to know whether statics follow it
  const statics = reg.statics;
  const resources: object[] = [];
  let lastSeq = -1;
  let i = start;
  for (; i < statics.length && resources.length <= pageSize; i++) {
    const e = statics[i]!;
    if (scoped && !permits(e, ctx.auth)) continue;
    if (resources.length === pageSize) {
      const page: ResourcePage = { resources, nextCursor: encodeMarkedCursor(AFTER_STATIC, lastSeq) };
      return scoped ? page : keep(reg, key, page);
    }
    resources.push(listingFor(e, ctx.features));
    lastSeq = e.seq;
  }
  if (!reg.enumerates) {
    const page: ResourcePage = { resources };
    return scoped ? page : keep(reg, key, page);
  }
  return enumeratedPage(reg, ctx, resources, 0, pageSize);
}

/**
 * Keeps a page of statics for the next caller, with its JSON text: answering it again serializes
 * nothing. (One JSON.stringify of the page: joining texts kept per listing measured slower, cold and warm.)
 */
function keep(reg: ResourceRegistry, key: string, page: ResourcePage): ResourcePage {
  Object.freeze(page.resources);
  reg.pages.set(key, preEncode(page));
  return page;
}

/** The rest of a `resources/list` page from the templates' `list`, from the `from`-th enumerated resource. */
async function enumeratedPage(
  reg: ResourceRegistry,
  ctx: Context,
  resources: object[],
  from: number,
  pageSize: number,
): Promise<ResourcePage> {
  const room = pageSize - resources.length;
  const listed: object[] = [];
  for (const t of visibleTo(reg.templates, ctx)) {
    if (!t.options.list) continue;
    for (const r of await t.options.list(ctx)) {
      const item: { [key: string]: unknown } = { ...r };
      if (item.mimeType === undefined && t.mimeType !== undefined) item.mimeType = t.mimeType;
      listed.push(shapePrimitive(item, ctx.features));
    }
  }
  const to = Math.min(from + room, listed.length);
  for (let i = from; i < to; i++) resources.push(listed[i]!);
  return to < listed.length ? { resources, nextCursor: encodeMarkedCursor(ENUMERATED, to) } : { resources };
}

/** `resources/templates/list`, pages of the server's `pageSize` unless `settings` say otherwise. */
export function listResourceTemplates(
  reg: ResourceRegistry,
  params: { cursor?: unknown },
  ctx: Context,
  settings: Pick<ServerSettings, "pageSize" | "cache"> = reg.settings,
) {
  return listPage("resourceTemplates", reg.templates, params, ctx, settings);
}

/** `resources/read`: never an empty contents array for a missing resource. Synchronous when `read` is. */
export function readResource(
  reg: ResourceRegistry,
  params: { [key: string]: unknown },
  ctx: Context,
): Awaitable<{ contents: ResourceContents[] }> {
  const uri = params.uri;
  if (typeof uri !== "string")
    throw new McpError(ErrorCode.InvalidParams, "resources/read needs a string uri");
  const hit = reg.resolve(uri);
  if (!hit) throw notFound(uri, ctx);
  requireScopes(`resource ${uri}`, hit.entry, ctx);
  ctx.cache(hit.entry.cache);
  const mimeType = hit.entry.mimeType;
  let value: unknown;
  try {
    value = hit.entry.options.read(hit.params as never, new ReadContext(ctx, uri));
  } catch (error) {
    throw readFailed(error, uri, ctx);
  }
  if (isPromiseLike(value))
    return Promise.resolve(value).then(
      (v) => answer(toResourceContents(v, uri, mimeType), ctx),
      (error) => {
        throw readFailed(error, uri, ctx);
      },
    );
  return answer(toResourceContents(value, uri, mimeType), ctx);
}

function answer(
  contents: ResourceContents[] | Promise<ResourceContents[]>,
  ctx: Context,
): Awaitable<{ contents: ResourceContents[] }> {
  if (!Array.isArray(contents)) return contents.then((c) => answer(c, ctx));
  return { contents: shapeResourceContents(contents, ctx.features) };
}

/** What a failed `read` throws: a not-found error spelled as the request's revision spells it. */
function readFailed(error: unknown, uri: string, ctx: Context): unknown {
  if (error instanceof McpError && error.code === ErrorCode.ResourceNotFound)
    return new McpError(ctx.features.resourceNotFoundCode, error.message, error.data ?? { uri });
  return error;
}
