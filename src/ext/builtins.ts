/**
 * The built-in extensions as a value: `defaultExtensions`, every method family picomcp serves in the
 * order their capabilities are declared, each made for a server and added through the same seam an
 * application's extension uses. A server made with a list of its own leaves some out or replaces them.
 */

import type { ChangeEvent } from "../bus.js";
import type { Features } from "../eras/versions.js";
import type { BuiltInBrand, Extension } from "../extension.js";
import { completionExtension } from "../prompts/completion.js";
import { type PromptEntry, promptsExtension } from "../prompts/prompts.js";
import { Registry, type ServerSettings } from "../registry.js";
import { ResourceRegistry, resourcesExtension } from "../resources/resources.js";
import { type SubscriptionLimits, subscriptionsExtension } from "../resources/subscriptions.js";
import { type ToolEntry, toolsExtension } from "../tools/tools.js";
import type { Implementation, ServerCapabilities } from "../types.js";
import type { ExtensionHost } from "../views/host.js";
import { listenExtension } from "./listen.js";
import { discoverExtension, experimentalExtension, loggingExtension } from "./protocol.js";
import { SKILLS, Skills } from "./skills.js";
import type { TaskRunner } from "./task-runner.js";
import { TASKS, type TaskOptions, tasksExtension } from "./tasks.js";

/** What the built-ins need of the server's core. */
export interface CoreView {
  /** What revision `f` is declared now. */
  declared(f: Features): { readonly capabilities: ServerCapabilities };
  /** The server's name, version and display fields. */
  readonly info: Implementation;
  /** 2026-07-28: the `_meta` of every result. */
  readonly serverMeta: { readonly [key: string]: unknown };
  /**
   * What every extension's `attach` is given (`onError`, the sessions, the caller limits): the
   * built-ins made before they are added reach the server through it, and through nothing else.
   */
  readonly host: ExtensionHost;
  /** The extensions added now (what `need` tells of, when it throws). */
  readonly extensions: { ids(): ReadonlySet<string> };
}

/** What the built-ins are made of: the server's options. */
export interface BuiltInOptions {
  readonly core: CoreView;
  /** What the registries read (page size, caching default, path safety, template limits, validator). */
  readonly settings: ServerSettings;
  /** The options of the built-ins over them. */
  readonly options: {
    readonly instructions?: string | undefined;
    readonly experimental?: { [key: string]: object } | undefined;
    readonly subscriptionLimits?: SubscriptionLimits | undefined;
    readonly tasks?: TaskOptions | undefined;
  };
  /** Publishes a change event on the server's bus. */
  readonly publish: (event: ChangeEvent) => void;
  /** A registry changed (what it implies is derived anew; clients hear of it). */
  readonly changed: (kind: "tools" | "resources" | "prompts") => void;
}

const TASK_ERROR = { method: "tools/call (task)", requestId: "task" } as const;

/** The server's registries, with what the built-ins of its preset make of them. */
interface Parts {
  readonly o: BuiltInOptions;
  readonly tools: Registry<ToolEntry>;
  readonly prompts: Registry<PromptEntry>;
  readonly resources: ResourceRegistry;
  readonly skills: Skills;
  readonly limits: SubscriptionLimits;
  readonly capabilities: (f: Features) => ServerCapabilities;
  /** Set by the tasks built-in: what runs this process's tasks. */
  runner?: TaskRunner;
}

/**
 * One entry of {@link defaultExtensions}: a built-in extension, made anew for each server from that
 * server's registries and options. Leave it out of `new McpServer({ extensions })`, or put an
 * extension of your own in its place.
 */
export interface BuiltIn extends BuiltInBrand {
  /** The id of the extension it makes: `picomcp/tools`, `io.modelcontextprotocol/tasks`, … */
  readonly id: string;
}

const makers = new WeakMap<object, (p: Parts) => Extension | undefined>();
const builtInIds = new Set<string>();

function builtIn(id: string, make: (p: Parts) => Extension | undefined): BuiltIn {
  const b = Object.freeze({ id });
  makers.set(b, make);
  builtInIds.add(id);
  return b as unknown as BuiltIn;
}

/**
 * Throws for a built-in entry, or a copy of one (an object with only a built-in's `id`), given where an
 * extension is expected: added as one, it would be an empty extension under the built-in's id.
 */
export function refuseBuiltIn(ext: unknown): void {
  const id = (ext as { id?: unknown } | null)?.id;
  if (typeof id !== "string" || !builtInIds.has(id)) return;
  if (makers.has(ext as object) || Object.keys(ext as object).length === 1)
    throw new TypeError(
      `${id} is a built-in: list it in new McpServer({ extensions })${makers.has(ext as object) ? "" : " (defaultExtensions' own entry, not a copy)"}`,
    );
}

/**
 * Every built-in extension, in the order their capabilities are declared: what `new McpServer()`
 * starts with. `picomcp/experimental` makes nothing without the `experimental` option.
 */
export const defaultExtensions: readonly BuiltIn[] = Object.freeze([
  builtIn("picomcp/experimental", (p) => {
    const experimental = p.o.options.experimental;
    return experimental ? experimentalExtension(experimental) : undefined;
  }),
  builtIn("picomcp/logging", () => loggingExtension()),
  builtIn("picomcp/completion", (p) => completionExtension(p.prompts, p.resources)),
  builtIn("picomcp/prompts", (p) => promptsExtension(p.prompts, p.o.settings)),
  builtIn("picomcp/resources", (p) => resourcesExtension(p.resources)),
  builtIn("picomcp/subscriptions", ({ resources, limits }) => subscriptionsExtension({ resources, limits })),
  builtIn("picomcp/tools", ({ tools, o }) =>
    toolsExtension(tools, o.settings, (e, name, ctx) =>
      o.core.host.report(e, { method: "tools/call", requestId: ctx.requestId, name }),
    ),
  ),
  builtIn("picomcp/listen", ({ resources, limits, capabilities }) =>
    listenExtension({ resources, limits, capabilities }),
  ),
  builtIn("picomcp/discover", ({ o, capabilities }) =>
    discoverExtension({
      info: o.core.info,
      instructions: o.options.instructions,
      cache: o.settings.cache,
      capabilities,
    }),
  ),
  builtIn(TASKS, (p) => {
    const { core, options, publish } = p.o;
    const report = (e: unknown) => core.host.report(e, TASK_ERROR);
    const tasks = tasksExtension(p.tools, options.tasks ?? {}, publish, report, core.host.limits);
    p.runner = tasks.runner;
    return tasks.extension;
  }),
  builtIn(SKILLS, (p) => p.skills.extension()),
]);

/** The server's registries and the extensions `list` makes of them, in its order; throws on a list that is not one. */
export function builtIns(o: BuiltInOptions, list: readonly (Extension | BuiltIn)[] = defaultExtensions) {
  if (!Array.isArray(list))
    throw new TypeError("new McpServer({ extensions }): extensions must be an array (see defaultExtensions)");
  const { core, options, settings } = o;
  const p: Parts = {
    o,
    tools: new Registry<ToolEntry>("tool", () => o.changed("tools")),
    prompts: new Registry<PromptEntry>("prompt", () => o.changed("prompts")),
    resources: new ResourceRegistry(() => o.changed("resources"), settings),
    skills: new Skills(settings),
    limits: options.subscriptionLimits ?? {},
    capabilities: (f) => core.declared(f).capabilities,
  };
  /** The built-ins made here, by id (an extension of the application's under the same id is not one). */
  const made = new Set<string>();
  const extensions: Extension[] = [];
  for (const entry of list) {
    const make = makers.get(entry);
    if (!make) {
      refuseBuiltIn(entry);
      extensions.push(entry as Extension); // what is not an extension is refused when it is added
      continue;
    }
    const ext = make(p);
    if (ext === undefined) continue;
    made.add(entry.id);
    extensions.push(ext);
  }
  for (const [option, ...ids] of OPTIONS)
    if (options[option] !== undefined && !ids.some((id) => made.has(id)))
      throw new TypeError(
        `new McpServer({ ${option} }): it configures ${ids.join(" and ")}, which extensions leaves out`,
      );
  const honest = withoutChannels(new Set(extensions.map((e) => e?.id)));
  return {
    tools: p.tools,
    prompts: p.prompts,
    resources: p.resources,
    skills: p.skills,
    tasks: p.runner,
    extensions: honest
      ? extensions.map((e) => (made.has(e?.id) && PRIMITIVES.has(e.id) ? honest(e) : e))
      : extensions,
    /** Throws, at registration, when `call` needs a built-in this server was made without. */
    need(call: string, ...needed: string[]): void {
      for (const id of needed) {
        if (made.has(id)) continue;
        throw new Error(
          p.o.core.extensions.ids().has(id)
            ? `${call}: needs the built-in ${id}, and this server's ${id} is one of its own`
            : `${call}: this server has no ${id}; add it to new McpServer({ extensions }) (defaultExtensions has it)`,
        );
      }
    },
  };
}

/** The options that configure built-ins and nothing else: given without any of them, they would do nothing. */
const OPTIONS = [
  ["tasks", TASKS],
  ["experimental", "picomcp/experimental"],
  ["subscriptionLimits", "picomcp/listen", "picomcp/subscriptions"],
] as const;

const PRIMITIVES = new Set(["picomcp/tools", "picomcp/prompts", "picomcp/resources"]);

/**
 * Without `picomcp/listen`, a 2026-07-28 client hears of no change, and without `picomcp/subscriptions`
 * a session cannot subscribe: the primitives then do not declare `listChanged` or `subscribe` where
 * nothing delivers them. Undefined when both are there (the primitives are served as they are).
 */
function withoutChannels(ids: ReadonlySet<string>): ((e: Extension) => Extension) | undefined {
  const listen = ids.has("picomcp/listen");
  const subscribe = ids.has("picomcp/subscriptions");
  if (listen && subscribe) return undefined;
  const strip = (caps: { readonly [key: string]: object }, f: Features) => {
    const out: { [key: string]: object } = {};
    for (const [key, value] of Object.entries(caps)) {
      const {
        listChanged,
        subscribe: sub,
        ...rest
      } = value as { listChanged?: boolean; subscribe?: boolean };
      const keep: { [key: string]: unknown } = {};
      if (sub !== undefined && (f.stateless ? listen : subscribe)) keep.subscribe = sub;
      if (listChanged !== undefined && (!f.stateless || listen)) keep.listChanged = listChanged;
      out[key] = { ...keep, ...rest };
    }
    return out;
  };
  return (e) => {
    const capabilities = e.capabilities!.bind(e);
    return {
      ...e,
      capabilities: (f) => {
        const caps = capabilities(f);
        return caps && strip(caps, f);
      },
    };
  };
}
