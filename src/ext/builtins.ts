/**
 * The built-in extensions of a server: every method family picomcp serves, each added through the
 * same seam an application's extension uses (`server.use`). Their order is the order in which their
 * capabilities are declared.
 */

import type { ChangeEvent } from "../bus.js";
import type { Connection } from "../connection.js";
import type { CacheHint } from "../eras/stateless.js";
import type { Features } from "../eras/versions.js";
import type { Extension } from "../extension.js";
import type { Governor } from "../limits/governor.js";
import { completionExtension } from "../prompts/completion.js";
import { type PromptEntry, promptsExtension } from "../prompts/prompts.js";
import { Registry } from "../registry.js";
import { ResourceRegistry, resourcesExtension } from "../resources/resources.js";
import { type SubscriptionLimits, subscriptionsExtension } from "../resources/subscriptions.js";
import type { UriTemplateLimits } from "../resources/template.js";
import { type ToolEntry, toolsExtension } from "../tools/tools.js";
import type { Implementation, RequestId, ServerCapabilities } from "../types.js";
import { listenExtension } from "./listen.js";
import { discoverExtension, experimentalExtension, loggingExtension } from "./protocol.js";
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
  /** The open connections (the sessions a resource update goes to). */
  readonly connections: Iterable<Connection>;
}

/** What the built-ins are made of: the server's options. */
export interface BuiltInOptions {
  readonly core: CoreView;
  readonly options: {
    readonly instructions?: string | undefined;
    readonly experimental?: { [key: string]: object } | undefined;
    readonly subscriptionLimits?: SubscriptionLimits | undefined;
    readonly tasks?: TaskOptions | undefined;
    readonly pathSafety?: boolean | undefined;
    readonly uriTemplateLimits?: UriTemplateLimits | undefined;
  };
  readonly pageSize: number;
  readonly cache: CacheHint;
  /** Publishes a change event on the server's bus. */
  readonly publish: (event: ChangeEvent) => void;
  /** A registry changed (what it implies is derived anew; clients hear of it). */
  readonly changed: (kind: "tools" | "resources" | "prompts") => void;
}

const TASK_ERROR = { method: "tools/call (task)", requestId: "task" } as const;

/** The server's registries, and the built-in extensions over them in the order their capabilities are declared. */
export function builtIns(o: BuiltInOptions) {
  const { core, options, pageSize, cache } = o;
  const tools = new Registry<ToolEntry>("tool", () => o.changed("tools"));
  const prompts = new Registry<PromptEntry>("prompt", () => o.changed("prompts"));
  const resources = new ResourceRegistry(
    () => o.changed("resources"),
    options.pathSafety ?? true,
    options.uriTemplateLimits ?? {},
    cache,
  );
  const skills = new Skills(pageSize, cache);
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
    promptsExtension(prompts, pageSize, cache),
    resourcesExtension(resources, pageSize),
    subscriptionsExtension({ resources, limits, governor: core.governor, sessions: core.connections }),
    toolsExtension(tools, pageSize, cache, (e, name, ctx) =>
      core.reportError(e, { method: "tools/call", requestId: ctx.requestId, name }),
    ),
    listenExtension({ resources, limits, capabilities, governor: core.governor }),
    discoverExtension({ info: core.info, instructions: options.instructions, cache, capabilities }),
    tasks.extension,
    skills.extension(),
  ];
  if (options.experimental) extensions.unshift(experimentalExtension(options.experimental));
  return { tools, prompts, resources, skills, extensions, tasks: tasks.runner };
}
