/**
 * The built-in extensions of a server: every method family picomcp serves, each added through the
 * same seam an application's extension uses (`server.use`). Their order is the order in which their
 * capabilities are declared.
 */

import type { ChangeEvent } from "../bus.js";
import type { SubscriptionLimits } from "../eras/listen.js";
import type { Features } from "../eras/versions.js";
import type { Extension } from "../extension.js";
import type { Governor } from "../limits/governor.js";
import { completionExtension } from "../prompts/completion.js";
import { type PromptEntry, promptsExtension } from "../prompts/prompts.js";
import { Registry, type ServerSettings } from "../registry.js";
import { ResourceRegistry, resourcesExtension } from "../resources/resources.js";
import { subscriptionsExtension } from "../resources/subscriptions.js";
import { type ToolEntry, toolsExtension } from "../tools/tools.js";
import type { Implementation, RequestId, ServerCapabilities } from "../types.js";
import { discoverExtension, experimentalExtension, listenExtension, loggingExtension } from "./protocol.js";
import { Skills } from "./skills.js";
import { type TaskOptions, tasksExtension } from "./tasks.js";

/** What the built-ins need of the server's core. */
export interface CoreView {
  /** What revision `f` is declared now. */
  declared(f: Features): { readonly capabilities: ServerCapabilities };
  /** The server's name, version and display fields. */
  readonly info: Implementation;
  /** 2026-07-28: the `_meta` of every result. */
  readonly serverMeta: { readonly [key: string]: unknown };
  /** Hands an unexpected error to `onError`. */
  reportError(error: unknown, info: { method: string; requestId: RequestId; name?: string }): void;
  /** What each caller holds of what the built-ins keep for it (tasks, listens, subscriptions). */
  readonly governor: Governor;
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

/** The server's registries, and the built-in extensions over them in the order their capabilities are declared. */
export function builtIns(o: BuiltInOptions) {
  const { core, options, settings } = o;
  const tools = new Registry<ToolEntry>("tool", () => o.changed("tools"));
  const prompts = new Registry<PromptEntry>("prompt", () => o.changed("prompts"));
  const resources = new ResourceRegistry(() => o.changed("resources"), settings);
  const skills = new Skills(settings);
  const capabilities = (f: Features) => core.declared(f).capabilities;
  const limits = options.subscriptionLimits ?? {};
  const tasks = tasksExtension(
    tools,
    options.tasks ?? {},
    o.publish,
    (e) => core.reportError(e, TASK_ERROR),
    core.governor,
  );
  const extensions: Extension[] = [
    loggingExtension(),
    completionExtension(prompts, resources),
    promptsExtension(prompts, settings),
    resourcesExtension(resources),
    subscriptionsExtension(resources, limits, core.governor),
    toolsExtension(tools, settings, (e, name, ctx) =>
      core.reportError(e, { method: "tools/call", requestId: ctx.requestId, name }),
    ),
    listenExtension(resources, limits, capabilities, core.serverMeta, core.governor),
    discoverExtension({
      info: core.info,
      instructions: options.instructions,
      cache: settings.cache,
      capabilities,
    }),
    tasks.extension,
    skills.extension(),
  ];
  if (options.experimental) extensions.unshift(experimentalExtension(options.experimental));
  return { tools, prompts, resources, skills, extensions, tasks: tasks.runner };
}
