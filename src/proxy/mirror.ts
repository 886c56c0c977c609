/**
 * The proxy's extension: the remote's tools, prompts, resources, templates and completions served as
 * picomcp's own methods, filtered and renamed, each call forwarded with its progress and cancellation;
 * resource subscriptions passed up once per URI and their updates passed down to the sessions that
 * subscribed.
 */

import type { RequestOptions } from "@modelcontextprotocol/client";
import { sessionSlot } from "../connection.js";
import type { Context } from "../context.js";
import type { CacheOptions } from "../eras/stateless.js";
import { ErrorCode, McpError } from "../errors.js";
import type { Extension } from "../extension.js";
import { parseUriTemplate } from "../resources/template.js";
import type { Params } from "../types.js";
import type { ExtensionHost } from "../views/host.js";
import type { Filters, RemoteResource } from "./filters.js";
import type { Upstream } from "./upstream.js";

/** What one downstream session subscribed to through the proxy, and what its end gives back. */
interface Subscribed {
  readonly uris: Set<string>;
  /** Gives back the caller's share and the proxy's count of each URI (set at the first subscribe). */
  release: ((uris: readonly string[]) => void) | undefined;
}

const SUBSCRIBED = sessionSlot<Subscribed>(
  "picomcp/proxy: subscribed",
  () => ({ uris: new Set(), release: undefined }),
  // a session that ends unsubscribes: the remote too, once no other session wants the URI
  (s) => s.release?.([...s.uris]),
);

/** What a subscribed URI counts for against its caller's `subscriptionBytes` share (as picomcp's own subscriptions). */
const bytesOf = (uri: string) => 2 * uri.length + 64;

/**
 * Whether a URI fits a remote template, matched by picomcp's own matcher (parsed once per list). A
 * template the matcher refuses (ambiguous) fits every URI that starts with its literal prefix: broad
 * on purpose, so that a hidden one hides too much rather than too little.
 */
function fitter(template: string): (uri: string) => boolean {
  try {
    const t = parseUriTemplate(template);
    return (uri) => {
      try {
        return t.match(uri) !== null;
      } catch {
        return true; // a malformed escape: the remote might still read it, so it counts as a fit
      }
    };
  } catch {
    const brace = template.indexOf("{");
    const prefix = brace < 0 ? template : template.slice(0, brace);
    return brace < 0 ? (uri) => uri === prefix : (uri) => uri.startsWith(prefix);
  }
}

/** What the remote shows through the filters, derived once per change of its lists. */
export class Shown {
  tools: object[] = [];
  back = new Map<string, string>();
  prompts: object[] = [];
  promptNames = new Set<string>();
  resources: RemoteResource[] = [];
  templates: RemoteResource[] = [];
  uris = new Set<string>();
  /** The URIs of the resources the filters hide. */
  hidden = new Set<string>();
  /** The shown templates' matchers, and the hidden ones'. */
  #fits: ((uri: string) => boolean)[] = [];
  #hiddenFits: ((uri: string) => boolean)[] = [];
  /** The shown templates as written, and the shown URIs: what a `ref/resource` of completion may name. */
  refs = new Set<string>();

  readonly upstream: Upstream;
  readonly filters: Filters;

  constructor(upstream: Upstream, filters: Filters) {
    this.upstream = upstream;
    this.filters = filters;
  }

  /** Derives the shown lists from the upstream's; throws (naming both) on two tools shown under one name. */
  derive(): void {
    const { lists } = this.upstream;
    const f = this.filters;
    ({ listed: this.tools, back: this.back } = f.tools(lists.tools));
    const prompts = lists.prompts.filter((p) => !f.hidePrompt(p));
    this.prompts = prompts;
    this.promptNames = new Set(prompts.map((p) => p.name));
    this.resources = lists.resources.filter((r) => !f.hideResource(r));
    this.uris = new Set(this.resources.map((r) => r.uri as string));
    this.hidden = new Set(lists.resources.filter((r) => f.hideResource(r)).map((r) => r.uri as string));
    const templates: RemoteResource[] = [];
    this.#fits = [];
    this.#hiddenFits = [];
    for (const t of lists.templates) {
      if (typeof t.uriTemplate !== "string") continue;
      const hide = f.hideResource(t);
      if (!hide) templates.push(t);
      (hide ? this.#hiddenFits : this.#fits).push(fitter(t.uriTemplate));
    }
    this.templates = templates;
    this.refs = new Set([...this.uris, ...templates.map((t) => t.uriTemplate as string)]);
  }

  /**
   * Whether `uri` may be read: a shown resource, or a URI that fits a shown template and neither is a
   * hidden resource nor fits a hidden template. Anything else is not found, never asked of the remote.
   */
  readable(uri: string): boolean {
    if (this.uris.has(uri)) return true;
    if (this.hidden.has(uri) || this.#hiddenFits.some((fits) => fits(uri))) return false;
    return this.#fits.some((fits) => fits(uri));
  }
}

function options(ctx: Context, timeoutMs: number): RequestOptions {
  return {
    signal: ctx.signal,
    timeout: timeoutMs,
    resetTimeoutOnProgress: true,
    onprogress: (p) => ctx.progress(p.progress, p.total, p.message),
  };
}

/** The fields of a result that each revision shapes anew: the proxy's own server sets them for its client. */
const SHAPED = new Set(["resultType", "ttlMs", "cacheScope"]);
const SERVER_INFO = "io.modelcontextprotocol/serverInfo";

/**
 * The remote's result as picomcp's handler result: its 2026-07-28 shape (`resultType`, its caching hint,
 * its server's `_meta`) taken off, for this server to shape for its own client; the hint kept as the
 * request's (a result without one gets `fallback`).
 */
function settle(ctx: Context, result: unknown, fallback: CacheOptions): unknown {
  if (typeof result !== "object" || result === null) return result;
  const r = result as { [key: string]: unknown };
  const out: { [key: string]: unknown } = {};
  for (const [key, value] of Object.entries(r)) if (!SHAPED.has(key)) out[key] = value;
  const meta = r._meta as { [key: string]: unknown } | undefined;
  if (meta && SERVER_INFO in meta) {
    const { [SERVER_INFO]: _, ...rest } = meta;
    if (Object.keys(rest).length > 0) out._meta = rest;
    else delete out._meta;
  }
  if (ctx.features.stateless)
    ctx.cache(
      typeof r.ttlMs === "number"
        ? { ttlMs: r.ttlMs, scope: r.cacheScope === "public" ? "public" : "private" }
        : fallback,
    );
  return out;
}

/** The extension that serves the remote's primitives; `cache` is the hint of a result the remote gave none. */
export function mirrorExtension(shown: Shown, timeoutMs: number, cache: CacheOptions = {}): Extension {
  const { upstream } = shown;
  const caps = upstream.capabilities as { [key: string]: { subscribe?: boolean } | undefined };
  const declared: { [key: string]: object } = {};
  if (caps.tools) declared.tools = { listChanged: true };
  if (caps.prompts) declared.prompts = { listChanged: true };
  if (caps.resources)
    declared.resources = { listChanged: true, ...(caps.resources.subscribe && { subscribe: true }) };
  if (caps.completions) declared.completions = {};
  let host: ExtensionHost | undefined;

  const forward = async (ctx: Context, method: string, params: Params) =>
    settle(ctx, await upstream.request(ctx, method, params, options(ctx, timeoutMs)), cache);
  /** A list as it is now: every item on one page. */
  const list = (ctx: Context, result: object) => {
    if (ctx.features.stateless) ctx.cache(cache);
    return result;
  };
  /** How many downstream sessions (2025) and listens (2026-07-28) want each URI: the remote is subscribed while it is above 0. */
  const wanted = new Map<string, number>();
  /** Counts `uris` as wanted once more; subscribes the remote to those newly wanted (counted back if it refuses). */
  const want = async (ctx: Context, uris: readonly string[]) => {
    const fresh: string[] = [];
    for (const uri of uris) {
      const n = wanted.get(uri) ?? 0;
      wanted.set(uri, n + 1);
      if (n === 0) fresh.push(uri);
    }
    try {
      await upstream.subscribe(ctx, fresh);
    } catch (error) {
      unwant(uris);
      throw error;
    }
  };
  /** Counts `uris` as wanted once less; unsubscribes the remote from those no one wants any more. */
  const unwant = (uris: readonly string[]) => {
    const gone: string[] = [];
    for (const uri of uris) {
      const n = (wanted.get(uri) ?? 1) - 1;
      if (n > 0) wanted.set(uri, n);
      else if (wanted.delete(uri)) gone.push(uri);
    }
    return gone.length > 0 ? upstream.unsubscribe(gone) : Promise.resolve();
  };
  const notFound = (uri: string) =>
    new McpError(ErrorCode.ResourceNotFound, `Resource not found: ${uri}`, { uri });

  return {
    id: "picomcp/proxy",
    capabilities: () => declared,
    attach: (h) => {
      host = h;
    },
    methods: {
      "tools/list": { when: (c) => !!c.tools, run: (_, ctx) => list(ctx, { tools: shown.tools }) },
      "tools/call": {
        when: (c) => !!c.tools,
        input: true,
        run: (p, ctx) => {
          const name = p.name;
          if (typeof name !== "string")
            throw new McpError(ErrorCode.InvalidParams, "tools/call needs a string name");
          const remote = shown.back.get(name);
          if (remote === undefined)
            throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`, { name });
          return forward(ctx, "tools/call", { name: remote, arguments: p.arguments ?? {} });
        },
      },
      "prompts/list": { when: (c) => !!c.prompts, run: (_, ctx) => list(ctx, { prompts: shown.prompts }) },
      "prompts/get": {
        when: (c) => !!c.prompts,
        input: true,
        run: (p, ctx) => {
          const name = p.name;
          if (typeof name !== "string" || !shown.promptNames.has(name))
            throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${String(name)}`, { name });
          return forward(ctx, "prompts/get", {
            name,
            ...(p.arguments !== undefined && { arguments: p.arguments }),
          });
        },
      },
      "resources/list": {
        when: (c) => !!c.resources,
        run: (_, ctx) => list(ctx, { resources: shown.resources }),
      },
      "resources/templates/list": {
        when: (c) => !!c.resources,
        run: (_, ctx) => list(ctx, { resourceTemplates: shown.templates }),
      },
      "resources/read": {
        when: (c) => !!c.resources,
        input: true,
        run: (p, ctx) => {
          const uri = p.uri;
          if (typeof uri !== "string")
            throw new McpError(ErrorCode.InvalidParams, "resources/read needs a string uri");
          if (!shown.readable(uri)) throw notFound(uri);
          return forward(ctx, "resources/read", { uri });
        },
      },
      "resources/subscribe": {
        era: "session",
        when: (c) => (c.resources as { subscribe?: boolean } | undefined)?.subscribe === true,
        run: async (p, ctx) => {
          const uri = p.uri;
          if (typeof uri !== "string")
            throw new McpError(ErrorCode.InvalidParams, "resources/subscribe needs a string uri");
          if (!shown.readable(uri)) throw notFound(uri);
          const s = ctx.sessionState(SUBSCRIBED);
          if (s.uris.has(uri)) return {};
          // each caller's subscriptions within its share, as picomcp's own (`limits.subscriptionBytes`)
          const key = ctx.caller;
          const limits = host!.limits;
          limits.take("subscriptionBytes", key, bytesOf(uri));
          s.uris.add(uri);
          s.release ??= (uris) => {
            for (const u of uris) limits.give("subscriptionBytes", key, bytesOf(u));
            void unwant(uris);
          };
          try {
            await want(ctx, [uri]);
          } catch (error) {
            s.uris.delete(uri);
            limits.give("subscriptionBytes", key, bytesOf(uri));
            throw error;
          }
          return {};
        },
      },
      "resources/unsubscribe": {
        era: "session",
        when: (c) => (c.resources as { subscribe?: boolean } | undefined)?.subscribe === true,
        run: async (p, ctx) => {
          const uri = p.uri;
          if (typeof uri !== "string")
            throw new McpError(ErrorCode.InvalidParams, "resources/unsubscribe needs a string uri");
          if (!ctx.sessionState(SUBSCRIBED).uris.delete(uri)) return {};
          host!.limits.give("subscriptionBytes", ctx.caller, bytesOf(uri));
          // the remote stays subscribed while another session wants the URI
          await unwant([uri]);
          return {};
        },
      },
      "completion/complete": {
        when: (c) => !!c.completions,
        run: (p, ctx) => {
          // only what the caller may see is completed; the caller's own `_meta` stays here
          const ref = p.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined;
          const shownRef =
            ref?.type === "ref/prompt"
              ? typeof ref.name === "string" && shown.promptNames.has(ref.name)
              : ref?.type === "ref/resource" && typeof ref.uri === "string" && shown.refs.has(ref.uri);
          if (!shownRef)
            throw new McpError(
              ErrorCode.InvalidParams,
              "completion/complete names no prompt or resource shown here",
              {
                ref: p.ref,
              },
            );
          return forward(ctx, "completion/complete", {
            ref: p.ref,
            argument: p.argument,
            ...(p.context !== undefined && { context: p.context }),
          });
        },
      },
    },
    wrap: {
      // a 2026-07-28 client's listen: the remote is subscribed to the URIs it names that may be read
      "subscriptions/listen": async (p, ctx, next) => {
        const uris = (p.notifications as { resourceSubscriptions?: unknown } | undefined)
          ?.resourceSubscriptions;
        if (
          !declared.resources ||
          !(declared.resources as { subscribe?: boolean }).subscribe ||
          !Array.isArray(uris)
        )
          return next();
        // the listen's own share is counted by picomcp's listen; the remote is subscribed while it is open
        const mine = [
          ...new Set(uris.filter((u): u is string => typeof u === "string" && shown.readable(u))),
        ];
        await want(ctx, mine);
        try {
          return await next();
        } finally {
          void unwant(mine);
        }
      },
    },
    change: (event) => {
      if (event.type !== "resource_updated" || !host) return;
      for (const session of host.sessions())
        if (session.peek(SUBSCRIBED)?.uris.has(event.uri))
          session.notify("notifications/resources/updated", { uri: event.uri });
    },
  };
}
