/**
 * The extension mechanism: an extension declares its settings under `capabilities.extensions` (per
 * revision, as it defines), adds methods to the method table, and may wrap an existing method (tasks
 * wrap `tools/call`). The next extension is a file that builds one `Extension`, not a change to dispatch.
 */
import type { RequestContext } from "../context.js";
import { missingCapability } from "../eras/modern.js";
import type { Features } from "../eras/versions.js";

type Params = { [key: string]: unknown };

/** A method an extension adds. */
export interface ExtensionMethod {
  /** Only in this era; the other answers -32601. Default: `"modern"` (2026-07-28). */
  readonly era?: "legacy" | "modern" | "both";
  /** 2026-07-28: whether the request's client must declare the extension (-32021 otherwise). Default: true. */
  readonly clientMustDeclare?: boolean;
  run(params: Params, ctx: RequestContext): unknown;
}

/** What one extension brings. */
export interface Extension {
  /** Its identifier, `io.modelcontextprotocol/tasks` say: the key under `capabilities.extensions`. */
  readonly id: string;
  /** The settings to declare under `capabilities.extensions` for revision `f`, or undefined: none. */
  settings(f: Features): object | undefined;
  /**
   * Capabilities outside `extensions` for revision `f` (2025-11-25 tasks are the core `tasks`
   * capability). The extension is served in `f` when this or `settings` gives something; otherwise
   * its methods answer -32601 and its wrappers do not run.
   */
  capabilities?(f: Features): { [key: string]: object } | undefined;
  /** Methods it adds, by name. */
  readonly methods?: { readonly [name: string]: ExtensionMethod };
  /** Wraps existing methods: `next` runs the method (and any wrapper below this one). */
  readonly wrap?: {
    readonly [name: string]: (params: Params, ctx: RequestContext, next: () => Promise<unknown>) => unknown;
  };
}

/** Whether the request's client declared the extension `id` (`capabilities.extensions[id]`). */
export function clientDeclares(ctx: RequestContext, id: string): boolean {
  const ext = ctx.client.capabilities.extensions;
  return typeof ext === "object" && ext !== null && Object.hasOwn(ext, id);
}

/** A method of an extension, as the dispatcher runs it. */
export interface ResolvedMethod {
  readonly era: "legacy" | "modern" | undefined;
  run(params: Params, ctx: RequestContext): unknown;
}

/** The extensions of one server: their capabilities, methods and wrappers. */
export class Extensions {
  readonly #all: Extension[] = [];
  readonly #methods = new Map<string, { ext: Extension; method: ExtensionMethod }>();
  readonly #wrapped = new Set<string>();

  /** Adds `ext`; throws when its id or one of its methods is taken (a programming mistake). */
  add(ext: Extension): void {
    if (this.#all.some((e) => e.id === ext.id)) throw new Error(`Extension ${ext.id} is already added`);
    for (const name of Object.keys(ext.methods ?? {}))
      if (this.#methods.has(name)) throw new Error(`Method ${name} is already added by an extension`);
    this.#all.push(ext);
    for (const [name, method] of Object.entries(ext.methods ?? {})) this.#methods.set(name, { ext, method });
    for (const name of Object.keys(ext.wrap ?? {})) this.#wrapped.add(name);
  }

  /** Copies each served extension's capabilities for revision `f` into `caps` (settings under `caps.extensions`). */
  declare(f: Features, caps: { [key: string]: unknown }): void {
    for (const ext of this.#all) Object.assign(caps, ext.capabilities?.(f));
    const extensions = this.#extensions(f);
    if (extensions) caps.extensions = extensions;
  }

  /** The ids of the extensions served in revision `f` now: what {@link declare} declares. */
  served(f: Features): ReadonlySet<string> {
    return new Set(this.#all.filter((ext) => this.#served(ext, f)).map((ext) => ext.id));
  }

  /** Served: among `told` (what a session was told at initialize) when given, else from what is registered now. */
  #served(ext: Extension, f: Features, told?: ReadonlySet<string>): boolean {
    if (told) return told.has(ext.id);
    return ext.settings(f) !== undefined || ext.capabilities?.(f) !== undefined;
  }

  #extensions(f: Features): { [id: string]: object } | undefined {
    let out: { [id: string]: object } | undefined;
    for (const ext of this.#all) {
      const settings = ext.settings(f);
      if (settings === undefined) continue;
      out ??= {};
      out[ext.id] = settings;
    }
    return out;
  }

  /** The extension method `name`, when its extension is served in `f` (to a session: when it was `told`). */
  method(name: string, f: Features, told?: ReadonlySet<string>): ResolvedMethod | undefined {
    const found = this.#methods.get(name);
    if (!found || !this.#served(found.ext, f, told)) return undefined;
    const { ext, method } = found;
    const era = method.era ?? "modern";
    return {
      era: era === "both" ? undefined : era,
      run: (params, ctx) => {
        if (ctx.features.modern && method.clientMustDeclare !== false && !clientDeclares(ctx, ext.id))
          throw missingCapability({ extensions: { [ext.id]: {} } });
        return method.run(params, ctx);
      },
    };
  }

  /** Whether an extension served in `f` (to a session: one it was `told` of) wraps method `name`. */
  wraps(name: string, f: Features, told?: ReadonlySet<string>): boolean {
    if (!this.#wrapped.has(name)) return false;
    for (const ext of this.#all)
      if (ext.wrap?.[name] !== undefined && this.#served(ext, f, told)) return true;
    return false;
  }

  /** Runs method `name` through the wrappers of every extension served in the request's revision (or `told`). */
  run(
    name: string,
    params: Params,
    ctx: RequestContext,
    run: () => unknown,
    told?: ReadonlySet<string>,
  ): unknown {
    // most methods have no wrapper: they pay nothing for the mechanism
    if (!this.#wrapped.has(name)) return run();
    let next: (() => unknown) | undefined;
    for (const ext of this.#all) {
      const wrap = ext.wrap?.[name];
      if (wrap === undefined || !this.#served(ext, ctx.features, told)) continue;
      const inner = next ?? run;
      next = () => wrap(params, ctx, async () => inner());
    }
    return next ? next() : run();
  }
}
