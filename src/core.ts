/** The server's state behind the registration API: registries, options, capabilities, method bodies. */

import type { RequestContext } from "./context.js";
import type { Features } from "./eras/versions.js";
import { complete } from "./prompts/completion.js";
import { getPrompt, listPrompts, type PromptEntry } from "./prompts/prompts.js";
import { Registry } from "./registry.js";
import {
  listResources,
  listResourceTemplates,
  ResourceRegistry,
  readResource,
} from "./resources/resources.js";
import type { UriTemplateLimits } from "./resources/template.js";
import { callTool, listTools, type ToolEntry } from "./tools/tools.js";
import type { Implementation, RequestId, ServerCapabilities } from "./types.js";

type Params = { [key: string]: unknown };

/** Where a handler's unexpected error happened, for the `onError` hook. */
export interface ErrorInfo {
  method: string;
  requestId: RequestId;
}

/** @internal */
export interface CoreOptions {
  info: Implementation;
  instructions: string | undefined;
  pageSize: number;
  requestTimeoutMs: number;
  experimental: { [key: string]: object } | undefined;
  pathSafety: boolean;
  uriTemplateLimits: UriTemplateLimits;
  onError: (error: unknown, info: ErrorInfo) => void;
  onListChanged: (kind: "tools" | "resources" | "prompts") => void;
}

/** @internal */
export class ServerCore {
  readonly info: Implementation;
  readonly instructions: string | undefined;
  readonly pageSize: number;
  readonly requestTimeoutMs: number;
  readonly tools: Registry<ToolEntry>;
  readonly prompts: Registry<PromptEntry>;
  readonly resources: ResourceRegistry;
  readonly #options: CoreOptions;

  constructor(options: CoreOptions) {
    this.#options = options;
    this.info = options.info;
    this.instructions = options.instructions;
    this.pageSize = options.pageSize;
    this.requestTimeoutMs = options.requestTimeoutMs;
    this.tools = new Registry("tool", () => options.onListChanged("tools"));
    this.prompts = new Registry("prompt", () => options.onListChanged("prompts"));
    this.resources = new ResourceRegistry(
      () => options.onListChanged("resources"),
      options.pathSafety,
      options.uriTemplateLimits,
    );
  }

  /** The capabilities to declare: derived from what is registered. */
  capabilities(f: Features): ServerCapabilities {
    const caps: ServerCapabilities = {};
    if (this.#options.experimental) caps.experimental = this.#options.experimental;
    caps.logging = {};
    const completable = this.prompts.size > 0 || this.resources.templates.length > 0;
    if (completable && f.completionsCapability) caps.completions = {};
    if (this.prompts.size > 0) caps.prompts = { listChanged: true };
    if (this.resources.size > 0) caps.resources = { subscribe: true, listChanged: true };
    if (this.tools.size > 0) caps.tools = { listChanged: true };
    return caps;
  }

  reportError(error: unknown, info: ErrorInfo): void {
    try {
      this.#options.onError(error, info);
    } catch {
      // an onError hook that throws must not turn one failure into two
    }
  }

  listTools(p: Params, ctx: RequestContext) {
    return listTools(this.tools, p, ctx, this.pageSize);
  }
  callTool(p: Params, ctx: RequestContext) {
    return callTool(this.tools, p, ctx);
  }
  listPrompts(p: Params, ctx: RequestContext) {
    return listPrompts(this.prompts, p, ctx, this.pageSize);
  }
  getPrompt(p: Params, ctx: RequestContext) {
    return getPrompt(this.prompts, p, ctx);
  }
  listResources(p: Params, ctx: RequestContext) {
    return listResources(this.resources, p, ctx, this.pageSize);
  }
  listResourceTemplates(p: Params, ctx: RequestContext) {
    return listResourceTemplates(this.resources, p, ctx, this.pageSize);
  }
  readResource(p: Params, ctx: RequestContext) {
    return readResource(this.resources, p, ctx);
  }
  complete(p: Params, ctx: RequestContext) {
    return complete(this.prompts, this.resources, p, ctx);
  }
}
