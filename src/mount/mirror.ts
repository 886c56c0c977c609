/**
 * One server mounted in another, as the parent's registries hold it: each entry of the child (tool,
 * prompt, resource, template, skill) mirrored under the prefix, kept in step with the child, its
 * handler running the child's own method; the names each claims, and the error of two owners of one.
 */

import type { ChangeEvent } from "../bus.js";
import type { Completer, Context } from "../context.js";
import type { Features } from "../eras/versions.js";
import { ErrorCode, McpError } from "../errors.js";
import { addSkill, SKILL_NAME, type Skills } from "../ext/skills.js";
import type { Extensions } from "../extension.js";
import type { Governor } from "../limits/governor.js";
import type { PromptEntry } from "../prompts/prompts.js";
import type { Registry } from "../registry.js";
import type { ResourceEntry, ResourceOptions, ResourceRegistry } from "../resources/resources.js";
import type { ToolEntry } from "../tools/tools.js";
import type { Params, RequestId } from "../types.js";

/** A list a mount mirrors. */
export type Kind = "tools" | "prompts" | "resources";
/** What a name belongs to: a list, or the skills (mirrored with the resources, whose changes they make). */
export type Named = Kind | "skills";

/** What a mount point needs of its server's core. */
export interface MountCore {
  readonly info: { readonly name: string };
  /** What revision `f` is declared: the same object until this server's extensions or registrations change. */
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
  readonly skills: Skills;
  /** Throws when `call` needs a built-in this server was made without (`server.tool` on a server without `picomcp/tools`). */
  readonly need: (call: string, ...ids: string[]) => void;
  /** Publishes a change event as the server's own: a mounted server's resource updates. */
  readonly publish: (event: ChangeEvent) => void;
}

/** The separator of a mounted skill's name: `prefix-name` (a skill's name is a-z 0-9 and "-" only). */
export const SKILL_SEPARATOR = "-";
/** The separator of a mounted tool's or prompt's name: `prefix_name` (SEP-986 allows `_`, and so does every client's function-name rule). */
export const SEPARATOR = "_";
export const MAX_TOOL_NAME = 128;

/** What a mount needs of the mount points of its two servers (see `Point`). */
export interface Point {
  readonly parts: MountParts;
  /** Checks of a skill's name before this server registers it from a mount. */
  readonly skillGuards: Set<(name: string) => void>;
  /** Throws, naming both owners, when `name` cannot be added here by `by`. */
  claim(kind: Named, name: string, by: string, template?: boolean): void;
  /** Records (or, with `undefined`, forgets) who holds a name here. */
  own(key: string, owner: string | undefined): void;
  /** Runs this server's `method` as a client's call would, with the context of the request where it is mounted (`inner` in place of the method). */
  run(
    method: string,
    params: Params,
    ctx: Context,
    inner?: (ctx: Context) => unknown,
    admitted?: boolean,
  ): unknown;
}

/** The error of two owners of one name. */
export function collision(
  { kind, template }: { kind: Named; template?: boolean },
  name: string,
  by: string,
  held: string,
  owner: string,
): Error {
  const what = kind === "resources" ? (template ? "resource template" : "resource") : kind.slice(0, -1);
  const same = held === name ? "" : " (both match the same URIs)";
  return new Error(
    `${what[0]!.toUpperCase()}${what.slice(1)} "${name}" of ${by} collides with ${what} "${held}" of ${owner}${same}: rename one, or mount under another prefix`,
  );
}

/** A child's skill, as its registry keeps it. */
type SkillEntry = Skills["registered"] extends ReadonlyMap<string, infer E> ? E : never;

/** What one mirrored entry is: the child's entry it mirrors, and what removes it from the parent. */
interface Held<T> {
  readonly entry: T;
  readonly remove: () => void;
}

/** One server mounted in another: what it mirrors, kept in step with the child's registries. */
export class Mount {
  readonly #parent: Point;
  readonly #child: Point;
  readonly #prefix: string;
  /** `mount "prefix" (server "name")`: the owner the errors name. */
  readonly #by: string;
  readonly #held = { tools: new Map(), prompts: new Map(), resources: new Map(), skills: new Map() } as {
    tools: Map<string, Held<ToolEntry>>;
    prompts: Map<string, Held<PromptEntry>>;
    resources: Map<string, Held<ResourceEntry>>;
    skills: Map<string, Held<SkillEntry>>;
  };

  /** The parent's requests whose `resources/list` the child admitted already. */
  readonly #listing = new WeakSet<Context>();

  constructor(parent: Point, child: Point, prefix: string, by: string) {
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
    for (const name of c.skills.registered.keys())
      this.#parent.claim("skills", this.#skillName(name), this.#by);
    for (const e of [...c.resources.statics, ...c.resources.templates])
      if (this.#skillOf(e.key) === undefined)
        this.#parent.claim("resources", e.key, this.#by, e.template !== undefined);
  }

  /** The name of a child's skill in the parent; throws when it is not a skill name. */
  #skillName(name: string): string {
    const out = `${this.#prefix}${SKILL_SEPARATOR}${name}`;
    if (!SKILL_NAME.test(out))
      throw new Error(
        `Skill "${name}" of ${this.#by} would be "${out}", not a skill name (1-64 of a-z 0-9 and "-"): mount it under a lowercase prefix`,
      );
    return out;
  }

  /** The child's skill whose file `uri` is (`skill://<name>/…`): the parent serves it as a skill of its own, under the prefix. */
  #skillOf(uri: string): string | undefined {
    if (!uri.startsWith("skill://")) return undefined;
    const name = uri.slice(8, uri.indexOf("/", 8));
    return this.#child.parts.skills.registered.has(name) ? name : undefined;
  }

  /** Guards on the child's registries: a later registration whose name is taken in the parent throws there. Returns what removes them. */
  guards(): () => void {
    const c = this.#child.parts;
    // a name the child holds already is the child's own duplicate: its registry says so, as unmounted
    const tool = (name: string) => {
      if (!c.tools.get(name)) this.#parent.claim("tools", this.#named("tools", name), this.#by);
    };
    const prompt = (name: string) => {
      if (!c.prompts.get(name)) this.#parent.claim("prompts", this.#named("prompts", name), this.#by);
    };
    const skill = (name: string) => this.#parent.claim("skills", this.#skillName(name), this.#by);
    const resource = (uri: string, template: boolean) => {
      if (c.resources.taken(uri, template) !== undefined) return;
      const of = this.#skillOf(uri);
      // a skill registers its files one by one: it is claimed with the first
      if (of === undefined) this.#parent.claim("resources", uri, this.#by, template);
      else if (!this.#held.skills.has(of)) skill(of);
    };
    c.tools.guards.add(tool);
    c.prompts.guards.add(prompt);
    c.resources.guards.add(resource);
    this.#child.skillGuards.add(skill);
    return () => {
      c.tools.guards.delete(tool);
      c.prompts.guards.delete(prompt);
      c.resources.guards.delete(resource);
      this.#child.skillGuards.delete(skill);
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
    else {
      // a skill's files are resources of the child: the parent serves the skill as one of its own
      this.#step(
        "skills",
        [...c.skills.registered.values()],
        (e) => e.frontmatter.name!,
        (e) => this.#skill(e),
      );
      const own = [...c.resources.statics, ...c.resources.templates].filter((e) => !this.#skillOf(e.key));
      this.#step(
        kind,
        own,
        (e) => e.key,
        (e) => this.#resource(e),
      );
    }
  }

  #skill(e: SkillEntry): [string, () => void] {
    const name = this.#skillName(e.frontmatter.name!);
    const p = this.#parent.parts;
    return [name, addSkill(p.skills, p.resources, name, e.options)];
  }

  #step<T>(kind: Named, now: readonly T[], key: (e: T) => string, add: (e: T) => [string, () => void]): void {
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
      list: e.options.list && this.#lister(e.options.list),
    } as unknown as ResourceOptions<string>;
    return [e.key, this.#parent.parts.resources.add(e.key, options)];
  }

  /**
   * A template's `list` as the parent's `resources/list` calls it: run as the child's `resources/list`
   * in place of its method (the child's wrappers around it, its share of requests, its errors and
   * `onError`), admitted once per request of the parent (its rate rules spent once, however many of
   * its templates list).
   */
  #lister(
    list: NonNullable<ResourceEntry["options"]["list"]>,
  ): (ctx: Context) => Promise<readonly unknown[]> {
    const child = this.#child;
    return async (ctx) => {
      const admitted = this.#listing.has(ctx);
      this.#listing.add(ctx);
      const page = (await child.run(
        "resources/list",
        {},
        ctx,
        async (c) => ({ resources: await list(c) }),
        admitted,
      )) as { resources?: unknown } | undefined;
      if (Array.isArray(page?.resources)) return page.resources;
      child.parts.core.reportError(new TypeError("resources/list of a template gave no array of resources"), {
        method: "resources/list",
        requestId: ctx.requestId,
      });
      throw new McpError(ErrorCode.InternalError, "Internal error");
    };
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
