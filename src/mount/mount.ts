/**
 * Mounting: the tools, prompts, resources and templates of one server served by another under a
 * prefix, as a live mirror. A mounted entry is an entry of the parent's registries (listing, scopes,
 * caching hints and list changes are the parent's, in both eras) whose handler runs the child's own
 * method (its wrappers, its rate rules and shares of requests and of requests to the client, its errors
 * and `onError`) with the parent's request context.
 */

import type { ChangeEvent } from "../bus.js";
import type { Context } from "../context.js";
import { InputRequiredSignal, refuse } from "../eras/input.js";
import { ErrorCode, McpError } from "../errors.js";
import { SKILLS } from "../ext/skills.js";
import { TASKS } from "../ext/tasks.js";
import type { Method } from "../extension.js";
import type { Governor } from "../limits/governor.js";
import { isPromiseLike, type Params } from "../types.js";
import { ContextView } from "../views/context-view.js";
import { collision, type Kind, Mount, type MountParts, type Named, type Point, SEPARATOR } from "./mirror.js";

export { type MountCore, type MountParts, SEPARATOR, SKILL_SEPARATOR } from "./mirror.js";

const PREFIX = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

const points = new WeakMap<object, MountPoint>();

/** The built-ins a parent needs to serve what a mount brings of each kind. */
const BUILT_INS = {
  tools: ["picomcp/tools"],
  prompts: ["picomcp/prompts"],
  resources: ["picomcp/resources"],
  skills: [SKILLS, "picomcp/resources"],
} as const;

/** The parts of a server that mounts, or is mounted: made once per server, found by the server object. */
export class MountPoint implements Point {
  readonly parts: MountParts;
  readonly #server: { resourceListChanged(): void };
  /** Called after each change of this server's registries (a mount of this server mirrors it). */
  readonly #watchers = new Set<(kind: Kind) => void>();
  /** Called with each change event this server publishes (a mount forwards resource updates). */
  readonly #published = new Set<(event: ChangeEvent) => void>();
  /** The servers mounted here, by prefix. */
  readonly #mounted = new Map<string, MountPoint>();
  /** Who holds each name mounts added here (`"tools weather_forecast"` → `mount "weather" (server "forecasts")`). */
  readonly #owners = new Map<string, string>();
  /** Checks of a skill's name before this server registers it from a mount (where this server is mounted in turn). */
  readonly skillGuards = new Set<(name: string) => void>();
  /** How each method runs here, by what this server declares to a revision (see {@link #plan}). */
  readonly #plans = new WeakMap<object, Map<string, Plan | undefined>>();

  /** `server`: the server whose mount point this is (`resourceListChanged` tells its clients a template's listing changed). */
  constructor(server: { resourceListChanged(): void }, parts: MountParts) {
    this.#server = server;
    this.parts = parts;
    points.set(server, this);
    const self = `server "${parts.core.info.name}"`;
    // the server's own registration of a name a mount holds is refused, naming both
    for (const kind of ["tools", "prompts"] as const)
      parts[kind].guards.add((name) => {
        const owner = this.#owners.get(`${kind} ${name}`);
        if (owner !== undefined) throw collision({ kind }, name, self, name, owner);
      });
    parts.resources.guards.add((uri, template) => {
      const held = parts.resources.taken(uri, template);
      const owner = held === undefined ? undefined : this.#owners.get(`resources ${held}`);
      if (owner !== undefined) throw collision({ kind: "resources", template }, uri, self, held!, owner);
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
      // what a template's `list` enumerates changed: the parent lists it too
      else if (event.type === "list_changed") this.#server.resourceListChanged();
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
  claim(kind: Named, name: string, by: string, template = false): void {
    const p = this.parts;
    p.need(`${kind.slice(0, -1)} "${name}" of ${by}`, ...BUILT_INS[kind]);
    const has = kind === "skills" ? p.skills.registered.has(name) : kind !== "resources" && p[kind].get(name);
    const held = kind === "resources" ? p.resources.taken(name, template) : has ? name : undefined;
    if (held !== undefined)
      throw collision(
        { kind, template },
        name,
        by,
        held,
        this.#owners.get(`${kind} ${held}`) ?? `server "${p.core.info.name}"`,
      );
    if (kind === "resources") for (const guard of p.resources.guards) guard(name, template);
    else for (const guard of kind === "skills" ? this.skillGuards : p[kind].guards) guard(name);
  }

  /** Records (or, with `undefined`, forgets) who holds `name` here. */
  own(key: string, owner: string | undefined): void {
    if (owner === undefined) this.#owners.delete(key);
    else this.#owners.set(key, owner);
  }

  /**
   * Runs this server's `method` as a client's call would, with `ctx`, the context of the request where
   * it is mounted: admitted by this server's governor (its caller's share of requests in flight, its
   * rate rules) and counted in that share while it runs past its synchronous part, given back once it
   * settles however it ends; this server's wrappers; an unexpected error goes to this server's
   * `onError` and is -32603, an `McpError` passes as it is. A tool runs as a task of the server the
   * call came to (its store, its `tasks/get`), so this server's tasks wrapper is left out. `inner`, if
   * given, is what the wrappers wrap in place of the method (one template's `list` for `resources/list`);
   * `admitted`: this request was admitted here already (its rate rules spent once), only counted now.
   */
  run(
    method: string,
    params: Params,
    ctx: Context,
    inner?: (ctx: Context) => unknown,
    admitted = false,
  ): unknown {
    const core = this.parts.core;
    const plan = this.#plan(method, ctx);
    if (plan === undefined) throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
    const { m, served, wrapped } = plan;
    const key = ctx.caller;
    const fail = (error: unknown): never => {
      if (error instanceof McpError || error instanceof InputRequiredSignal) throw error;
      const about =
        typeof params.uri === "string"
          ? { uri: params.uri }
          : typeof params.name === "string"
            ? { name: params.name }
            : {};
      core.reportError(error, { method, requestId: ctx.requestId, ...about });
      throw new McpError(ErrorCode.InternalError, "Internal error");
    };
    const go = (): unknown => {
      let r: unknown;
      try {
        const own = inner ?? ((c: Context) => m.run(params, c));
        const asking = new Asking(ctx, core.governor);
        r = wrapped ? core.extensions.run(method, params, asking, served, own) : own(asking);
      } catch (error) {
        return fail(error);
      }
      if (!isPromiseLike(r)) return r;
      // in this server's share from here, as a request to it is: a synchronous run is over before another is admitted
      const governor = core.governor;
      governor.add("requests", key, 1);
      return Promise.resolve(r).then(
        (v) => {
          governor.give("requests", key);
          return v;
        },
        (error: unknown) => {
          governor.give("requests", key);
          return fail(error);
        },
      );
    };
    const refused = admitted
      ? core.governor.check("requests", key)
      : core.governor.admit(key, method, params);
    if (refused === undefined) return go();
    if (!isPromiseLike(refused)) throw refused;
    return Promise.resolve(refused).then((r) => {
      if (r !== undefined) throw r;
      return go();
    });
  }

  /**
   * How `method` runs here for the request's revision: the method, the extensions served (without the
   * tasks extension for `tools/call`), whether any of them wraps it. Made once per revision and per
   * change of this server's extensions (what `declared` gives is new after each), not per call.
   */
  #plan(method: string, ctx: Context): Plan | undefined {
    const declared = this.parts.core.declared(ctx.features);
    let plans = this.#plans.get(declared);
    if (plans === undefined) {
      plans = new Map();
      this.#plans.set(declared, plans);
    }
    if (plans.has(method)) return plans.get(method);
    const all = declared.extensions;
    const served =
      method === "tools/call" && all.has(TASKS) ? new Set([...all].filter((id) => id !== TASKS)) : all;
    const m = this.parts.core.extensions.method(method, served);
    const plan = m && { m, served, wrapped: this.parts.core.extensions.wraps(method, served) };
    plans.set(method, plan);
    return plan;
  }
}

/**
 * The context a mounted server's method runs with: the parent's request's, but its 2025 requests to
 * the client (`elicit`, `sample`, `roots`) count in this server's share of them (`inputRounds`) as
 * when it is called directly, and in the parent's share too (they go out on the parent's connection).
 */
class Asking extends ContextView {
  readonly #governor: Governor;

  constructor(base: Context, governor: Governor) {
    super(base);
    this.#governor = governor;
  }

  override elicit(...args: Parameters<Context["elicit"]>) {
    return this.#counted(() => this.base.elicit(...args));
  }

  override sample(...args: Parameters<Context["sample"]>) {
    return this.#counted(() => this.base.sample(...args));
  }

  override roots(...args: Parameters<Context["roots"]>) {
    return this.#counted(() => this.base.roots(...args));
  }

  #counted<T>(ask: () => Promise<T>): Promise<T> {
    // 2026-07-28 asks in its answer (input rounds): nothing is held open, as when called directly
    if (this.features.stateless) return ask();
    const release = this.#governor.claim("inputRounds", this.caller);
    if (typeof release !== "function") return refuse<T>(release);
    try {
      return ask().finally(release);
    } catch (error) {
      release();
      throw error;
    }
  }
}

/** How a method runs in a mounted server, for one revision (see `MountPoint#plan`). */
interface Plan {
  readonly m: Method;
  readonly served: ReadonlySet<string>;
  readonly wrapped: boolean;
}

/** The mount point of `server`, if it is an McpServer. */
export function mountPointOf(server: unknown): MountPoint | undefined {
  return typeof server === "object" && server !== null ? points.get(server) : undefined;
}
