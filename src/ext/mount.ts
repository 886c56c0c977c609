/**
 * Mounting: the tools, prompts, resources and templates of one server served by another under a
 * prefix, as a live mirror. A mounted entry is an entry of the parent's registries (listing, scopes,
 * caching hints and list changes are the parent's, in both eras) whose handler runs the child's own
 * method (its wrappers, its rate rules, its errors and `onError`) with the parent's request context.
 */

import type { ChangeEvent } from "../bus.js";
import type { Completer, Context } from "../context.js";
import { InputRequiredSignal } from "../eras/input.js";
import type { Features } from "../eras/versions.js";
import { ErrorCode, McpError } from "../errors.js";
import type { Extensions } from "../extension.js";
import type { Governor } from "../limits/governor.js";
import type { PromptEntry } from "../prompts/prompts.js";
import type { Registry } from "../registry.js";
import type { ResourceEntry, ResourceOptions, ResourceRegistry } from "../resources/resources.js";
import type { ToolEntry } from "../tools/tools.js";
import { isPromiseLike, type Params, type RequestId } from "../types.js";
import { TASKS } from "./tasks.js";

/** A list a mount mirrors. */
type Kind = "tools" | "prompts" | "resources";

/** What a mount point needs of its server's core. */
export interface MountCore {
  readonly info: { readonly name: string };
  declared(f: Features): { readonly extensions: ReadonlySet<string> };
  readonly extensions: Extensions;
  readonly governor: Governor;
  reportError(
    error: unknown,
    info: { method: string; requestId: RequestId; uri?: string; name?: string },
  ): void;
}

/** A server's parts a mount reads (as a child) and writes (as a parent). */
export interface MountParts {
  readonly core: MountCore;
  readonly tools: Registry<ToolEntry>;
  readonly prompts: Registry<PromptEntry>;
  readonly resources: ResourceRegistry;
  /** Publishes a change event as the server's own: a mounted server's resource updates. */
  readonly publish: (event: ChangeEvent) => void;
}

/** The separator of a mounted tool's or prompt's name: `prefix_name` (SEP-986 allows `_`, and so does every client's function-name rule). */
export const SEPARATOR = "_";
const PREFIX = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const MAX_TOOL_NAME = 128;

const points = new WeakMap<object, MountPoint>();

/** The parts of a server that mounts, or is mounted: made once per server, found by the server object. */
export class MountPoint {
  readonly parts: MountParts;
  /** Called after each change of this server's registries (a mount of this server mirrors it). */
  readonly #watchers = new Set<(kind: Kind) => void>();
  /** Called with each change event this server publishes (a mount forwards resource updates). */
  readonly #published = new Set<(event: ChangeEvent) => void>();
  /** The servers mounted here, by prefix. */
  readonly #mounted = new Map<string, MountPoint>();
  /** Who holds each name mounts added here (`"tools weather_forecast"` → `mount "weather" (server "forecasts")`). */
  readonly #owners = new Map<string, string>();
  /** Sets of served ids without the tasks extension, by the set they were made from. */
  readonly #noTasks = new WeakMap<ReadonlySet<string>, ReadonlySet<string>>();

  constructor(server: object, parts: MountParts) {
    this.parts = parts;
    points.set(server, this);
    const self = `server "${parts.core.info.name}"`;
    // the server's own registration of a name a mount holds is refused, naming both
    for (const kind of ["tools", "prompts"] as const)
      parts[kind].guards.add((name) => {
        const owner = this.#owners.get(`${kind} ${name}`);
        if (owner !== undefined) throw collision(kind, name, self, name, owner);
      });
    parts.resources.guards.add((uri, template) => {
      const held = parts.resources.taken(uri, template);
      const owner = held === undefined ? undefined : this.#owners.get(`resources ${held}`);
      if (owner !== undefined) throw collision("resources", uri, self, held!, owner, template);
    });
  }

  /** This server's registries changed (`kind`): the mounts of it mirror the change now. */
  changed(kind: Kind): void {
    for (const watch of [...this.#watchers]) watch(kind);
  }

  /** This server published `event`: the servers it is mounted in hear of its resource updates. */
  published(event: ChangeEvent): void {
    for (const forward of [...this.#published]) forward(event);
  }

  /** Mounts `server` under `prefix`; returns what unmounts it. Throws on a bad prefix, a loop, or any name taken. */
  mount(prefix: string, server: unknown): () => void {
    const call = `server.mount(${JSON.stringify(prefix)})`;
    if (typeof prefix !== "string" || !PREFIX.test(prefix))
      throw new TypeError(
        `${call}: a prefix is 1-64 characters of A-Z a-z 0-9 _ - ., starting with a letter or digit (it starts the names: prefix${SEPARATOR}tool)`,
      );
    const child = typeof server === "object" && server !== null ? points.get(server) : undefined;
    if (child === undefined) throw new TypeError(`${call}: what is mounted must be an McpServer`);
    const name = (p: MountPoint) => `server "${p.parts.core.info.name}"`;
    if (this.#mounted.has(prefix))
      throw new Error(`${call}: ${name(this.#mounted.get(prefix)!)} is mounted under "${prefix}" already`);
    if (child === this || child.#reaches(this))
      throw new Error(`${call}: ${name(child)} is ${name(this)} or mounts it: that would be a loop`);
    const mount = new Mount(this, child, prefix, `mount "${prefix}" (${name(child)})`);
    mount.check();
    const guards = mount.guards();
    const watch = (kind: Kind) => mount.sync(kind);
    const forward = (event: ChangeEvent) => {
      if (event.type === "resource_updated") this.parts.publish(event);
    };
    let mounted = true;
    const unmount = () => {
      if (!mounted) return;
      mounted = false;
      guards();
      child.#watchers.delete(watch);
      child.#published.delete(forward);
      this.#mounted.delete(prefix);
      mount.clear();
    };
    this.#mounted.set(prefix, child);
    child.#watchers.add(watch);
    child.#published.add(forward);
    try {
      for (const kind of ["tools", "prompts", "resources"] as const) mount.sync(kind);
    } catch (error) {
      unmount();
      throw error;
    }
    return unmount;
  }

  /** Whether `target` is mounted here, directly or further down. */
  #reaches(target: MountPoint): boolean {
    for (const p of this.#mounted.values()) if (p === target || p.#reaches(target)) return true;
    return false;
  }

  /**
   * Throws, naming both owners, when `name` of `kind` cannot be added here by `by`: taken in this
   * server, or in one this server is mounted in (its registries' guards ask them).
   */
  claim(kind: Kind, name: string, by: string, template = false): void {
    const p = this.parts;
    const held =
      kind === "resources" ? p.resources.taken(name, template) : p[kind].get(name) ? name : undefined;
    if (held !== undefined)
      throw collision(
        kind,
        name,
        by,
        held,
        this.#owners.get(`${kind} ${held}`) ?? `server "${p.core.info.name}"`,
        template,
      );
    if (kind === "resources") for (const guard of p.resources.guards) guard(name, template);
    else for (const guard of p[kind].guards) guard(name);
  }

  /** Records (or, with `undefined`, forgets) who holds `name` here. */
  own(key: string, owner: string | undefined): void {
    if (owner === undefined) this.#owners.delete(key);
    else this.#owners.set(key, owner);
  }

  /**
   * Runs this server's `method` as a client's call would, with `ctx`, the context of the request where
   * it is mounted: this server's wrappers and rate rules; an unexpected error goes to this server's
   * `onError` and is -32603, an `McpError` passes as it is. A tool runs as a task of the server the
   * call came to (its store, its `tasks/get`), so this server's tasks wrapper is left out.
   */
  run(method: string, params: Params, ctx: Context): unknown {
    const core = this.parts.core;
    let served = core.declared(ctx.features).extensions;
    if (method === "tools/call" && served.has(TASKS)) served = this.#withoutTasks(served);
    const m = core.extensions.method(method, served);
    if (m === undefined) throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
    const fail = (error: unknown): never => {
      if (error instanceof McpError || error instanceof InputRequiredSignal) throw error;
      const about = typeof params.uri === "string" ? { uri: params.uri } : { name: String(params.name) };
      core.reportError(error, { method, requestId: ctx.requestId, ...about });
      throw new McpError(ErrorCode.InternalError, "Internal error");
    };
    const go = (): unknown => {
      try {
        const r = core.extensions.wraps(method, served)
          ? core.extensions.run(method, params, ctx, served, (c) => m.run(params, c))
          : m.run(params, ctx);
        return isPromiseLike(r) ? Promise.resolve(r).then(undefined, fail) : r;
      } catch (error) {
        return fail(error);
      }
    };
    const refused = core.governor.admit(ctx.caller, method, params);
    if (refused === undefined) return go();
    if (!isPromiseLike(refused)) throw refused;
    return Promise.resolve(refused).then((r) => {
      if (r !== undefined) throw r;
      return go();
    });
  }

  #withoutTasks(served: ReadonlySet<string>): ReadonlySet<string> {
    let out = this.#noTasks.get(served);
    if (out === undefined) {
      out = new Set([...served].filter((id) => id !== TASKS));
      this.#noTasks.set(served, out);
    }
    return out;
  }
}

/** The mount point of `server`, if it is an McpServer. */
export function mountPointOf(server: unknown): MountPoint | undefined {
  return typeof server === "object" && server !== null ? points.get(server) : undefined;
}

/** The error of two owners of one name. */
function collision(
  kind: Kind,
  name: string,
  by: string,
  held: string,
  owner: string,
  template = false,
): Error {
  const what =
    kind === "tools" ? "tool" : kind === "prompts" ? "prompt" : template ? "resource template" : "resource";
  const same = held === name ? "" : " (both match the same URIs)";
  return new Error(
    `${what[0]!.toUpperCase()}${what.slice(1)} "${name}" of ${by} collides with ${what} "${held}" of ${owner}${same}: rename one, or mount under another prefix`,
  );
}

/** What one mirrored entry is: the child's entry it mirrors, and what removes it from the parent. */
interface Held<T> {
  readonly entry: T;
  readonly remove: () => void;
}

/** One server mounted in another: what it mirrors, kept in step with the child's registries. */
class Mount {
  readonly #parent: MountPoint;
  readonly #child: MountPoint;
  readonly #prefix: string;
  /** `mount "prefix" (server "name")`: the owner the errors name. */
  readonly #by: string;
  readonly #held = { tools: new Map(), prompts: new Map(), resources: new Map() } as {
    tools: Map<string, Held<ToolEntry>>;
    prompts: Map<string, Held<PromptEntry>>;
    resources: Map<string, Held<ResourceEntry>>;
  };

  constructor(parent: MountPoint, child: MountPoint, prefix: string, by: string) {
    this.#parent = parent;
    this.#child = child;
    this.#prefix = prefix;
    this.#by = by;
  }

  /** The name of a child's tool or prompt in the parent; throws for a tool name longer than 128. */
  #named(kind: "tools" | "prompts", name: string): string {
    const out = `${this.#prefix}${SEPARATOR}${name}`;
    if (kind === "tools" && out.length > MAX_TOOL_NAME)
      throw new Error(
        `Tool "${out}" of ${this.#by} is longer than ${MAX_TOOL_NAME} characters: use a shorter prefix`,
      );
    return out;
  }

  /** Throws when any name of the child is taken in the parent, before anything is added. */
  check(): void {
    const c = this.#child.parts;
    for (const kind of ["tools", "prompts"] as const)
      for (const e of c[kind].values()) this.#parent.claim(kind, this.#named(kind, e.name), this.#by);
    for (const e of [...c.resources.statics, ...c.resources.templates])
      this.#parent.claim("resources", e.key, this.#by, e.template !== undefined);
  }

  /** Guards on the child's registries: a later registration whose name is taken in the parent throws there. Returns what removes them. */
  guards(): () => void {
    const c = this.#child.parts;
    const tool = (name: string) => this.#parent.claim("tools", this.#named("tools", name), this.#by);
    const prompt = (name: string) => this.#parent.claim("prompts", this.#named("prompts", name), this.#by);
    const resource = (uri: string, template: boolean) =>
      this.#parent.claim("resources", uri, this.#by, template);
    c.tools.guards.add(tool);
    c.prompts.guards.add(prompt);
    c.resources.guards.add(resource);
    return () => {
      c.tools.guards.delete(tool);
      c.prompts.guards.delete(prompt);
      c.resources.guards.delete(resource);
    };
  }

  /** Brings the parent's mirror of the child's `kind` in step: what came is added, what went is removed. */
  sync(kind: Kind): void {
    const c = this.#child.parts;
    if (kind === "tools")
      this.#step(
        kind,
        c.tools.values(),
        (e) => e.name,
        (e) => this.#tool(e),
      );
    else if (kind === "prompts")
      this.#step(
        kind,
        c.prompts.values(),
        (e) => e.name,
        (e) => this.#prompt(e),
      );
    else
      this.#step(
        kind,
        [...c.resources.statics, ...c.resources.templates],
        (e) => e.key,
        (e) => this.#resource(e),
      );
  }

  #step<T>(kind: Kind, now: readonly T[], key: (e: T) => string, add: (e: T) => [string, () => void]): void {
    const held = this.#held[kind] as unknown as Map<string, Held<T>>;
    const seen = new Set<string>();
    for (const e of now) {
      const k = key(e);
      seen.add(k);
      const had = held.get(k);
      if (had?.entry === e) continue;
      if (had) had.remove();
      const [name, remove] = add(e);
      this.#parent.own(`${kind} ${name}`, this.#by);
      held.set(k, {
        entry: e,
        remove: () => {
          this.#parent.own(`${kind} ${name}`, undefined);
          remove();
        },
      });
    }
    for (const [k, had] of held)
      if (!seen.has(k)) {
        held.delete(k);
        had.remove();
      }
  }

  /** Removes everything mirrored (each list's change is told once). */
  clear(): void {
    for (const held of Object.values(this.#held) as Map<string, Held<unknown>>[]) {
      for (const had of held.values()) had.remove();
      held.clear();
    }
  }

  #tool(e: ToolEntry): [string, () => void] {
    const name = this.#named("tools", e.name);
    const child = this.#child;
    const entry: ToolEntry = {
      ...e,
      name,
      listing: { ...e.listing, name },
      // the child validates its arguments and its result, as when called directly
      input: undefined,
      output: undefined,
      shaped: new Map(),
      run: (args, ctx) => child.run("tools/call", { name: e.name, arguments: args }, ctx),
    };
    return [name, this.#parent.parts.tools.add(name, entry)];
  }

  #prompt(e: PromptEntry): [string, () => void] {
    const name = this.#named("prompts", e.name);
    const child = this.#child;
    const entry: PromptEntry = {
      ...e,
      name,
      listing: { ...e.listing, name },
      // the child checks its arguments, as when called directly
      required: [],
      schema: undefined,
      shaped: new Map(),
      complete: this.#completers(e.complete, { type: "ref/prompt", name: e.name }),
      get: (args, ctx) => child.run("prompts/get", { name: e.name, arguments: args }, ctx),
    };
    return [name, this.#parent.parts.prompts.add(name, entry)];
  }

  #resource(e: ResourceEntry): [string, () => void] {
    const child = this.#child;
    const complete = e.options.complete as { [key: string]: Completer | undefined } | undefined;
    const options = {
      ...e.options,
      pathSafety: e.pathSafety,
      cache: { ttlMs: e.cache.ttlMs, scope: e.cache.cacheScope },
      complete: complete && this.#completers(complete, { type: "ref/resource", uri: e.key }),
      read: (_: unknown, ctx: Context & { uri: string }) =>
        child.run("resources/read", { uri: ctx.uri }, ctx),
    } as unknown as ResourceOptions<string>;
    return [e.key, this.#parent.parts.resources.add(e.key, options)];
  }

  /** Completers that ask the child's `completion/complete` for `ref`, one per argument the child completes. */
  #completers(
    table: { readonly [key: string]: Completer | undefined },
    ref: { type: string; name?: string; uri?: string },
  ): { [key: string]: Completer | undefined } {
    const child = this.#child;
    const out: { [key: string]: Completer | undefined } = {};
    for (const key of Object.keys(table)) {
      if (table[key] === undefined) continue;
      out[key] = async (value, ctx) => {
        const params = { ref, argument: { name: key, value }, context: { arguments: ctx.arguments } };
        const answer = (await child.run("completion/complete", params, ctx)) as {
          completion: { values: string[]; total?: number; hasMore?: boolean };
        };
        return answer.completion;
      };
    }
    return out;
  }
}
