/**
 * MCP Apps (`io.modelcontextprotocol/ui`): a `ui://` resource of `text/html;profile=mcp-app` that a
 * host renders in a sandboxed frame, and a tool linked to it by `_meta.ui.resourceUri` (and the
 * older `_meta["ui/resourceUri"]`, which hosts still read). `server.app(...)` registers both at once.
 */
import type { Context } from "../context.js";
import type { Registry } from "../registry.js";
import type { ResourceOptions, ResourceRegistry } from "../resources/resources.js";
import type { SchemaLike } from "../schema/schema.js";
import type { ToolEntry, ToolOptions } from "../tools/tools.js";
import type { Meta } from "../types.js";

/** The extension's identifier: hosts that render apps declare it in their capabilities. */
export const APPS = "io.modelcontextprotocol/ui";
/** The MIME type of an app's HTML. */
export const APP_MIME_TYPE = "text/html;profile=mcp-app";

/** The app's page: the `ui://` resource. */
export interface AppUi {
  /** Its URI: fixed (no `{…}` template expressions), starting with `ui://`. */
  uri: string;
  /** The HTML document (scripts and styles inline), or a function that builds it. */
  html: string | (() => string | Promise<string>);
  /** Display name of the resource. Default: the tool's name. */
  name?: string;
  /** The origins the page may reach (`connectDomains`, `resourceDomains`, …), as `_meta.ui.csp`. Default: none. */
  csp?: {
    connectDomains?: string[];
    resourceDomains?: string[];
    frameDomains?: string[];
    baseUriDomains?: string[];
  };
  /** Whether the host should draw a border around the frame (`_meta.ui.prefersBorder`). Default: the host's choice. */
  prefersBorder?: boolean;
}

/** Options of `server.app(name, options)`: a tool's options and its page. */
export type AppOptions<I extends SchemaLike | undefined, O extends SchemaLike | undefined> = ToolOptions<
  I,
  O
> & {
  /** The page the host shows for the tool's results. */
  ui: AppUi;
  /** Who may call the tool: the model, the app itself, or both (`_meta.ui.visibility`). Default: both. */
  visibility?: ("model" | "app")[];
};

/** Whether the request's client renders MCP Apps (it declared the extension with the app MIME type). */
export function rendersApps(ctx: Context): boolean {
  const ext = ctx.client.capabilities.extensions?.[APPS] as { mimeTypes?: unknown } | undefined;
  return Array.isArray(ext?.mimeTypes) && ext.mimeTypes.includes(APP_MIME_TYPE);
}

/** The resource and the tool options `server.app(name, options)` registers; throws on a URI that is not a fixed `ui://` one. */
export function appParts<I extends SchemaLike | undefined, O extends SchemaLike | undefined>(
  name: string,
  options: AppOptions<I, O>,
): { uri: string; resource: ResourceOptions<string>; tool: ToolOptions<I, O> } {
  const { ui, visibility, ...tool } = options;
  if (typeof ui?.uri !== "string" || !ui.uri.startsWith("ui://"))
    throw new TypeError(`App "${name}": ui.uri must start with ui://`);
  // a template would serve the one page under every URI it matches, each a resource of its own
  if (/[{}]/.test(ui.uri))
    throw new TypeError(
      `App "${name}": ui.uri must be a fixed URI, not a template: ${JSON.stringify(ui.uri)} has {…}`,
    );
  if (typeof ui.html !== "string" && typeof ui.html !== "function")
    throw new TypeError(`App "${name}": ui.html must be a string or a function`);
  const uiMeta: { [key: string]: unknown } = {};
  if (ui.csp !== undefined) uiMeta.csp = ui.csp;
  if (ui.prefersBorder !== undefined) uiMeta.prefersBorder = ui.prefersBorder;
  const html = ui.html;
  const resource: ResourceOptions<string> = {
    name: ui.name ?? name,
    mimeType: APP_MIME_TYPE,
    read: async () => [
      {
        uri: ui.uri,
        mimeType: APP_MIME_TYPE,
        text: typeof html === "string" ? html : await html(),
        ...(Object.keys(uiMeta).length ? { _meta: { ui: uiMeta } } : {}),
      },
    ],
  };
  if (Object.keys(uiMeta).length) resource._meta = { ui: uiMeta };
  const link: { [key: string]: unknown } = { resourceUri: ui.uri };
  if (visibility !== undefined) link.visibility = visibility;
  const own = tool._meta ?? {};
  const meta: Meta = { ...own, ui: { ...(own.ui as object | undefined), ...link }, "ui/resourceUri": ui.uri };
  return { uri: ui.uri, resource, tool: { ...tool, _meta: meta } as ToolOptions<I, O> };
}

/** Registers an app's page and its tool together (a tool name that is taken undoes the page); returns what removes both. */
export function addApp(
  tools: Registry<ToolEntry>,
  resources: ResourceRegistry,
  uri: string,
  resource: ResourceOptions<string>,
  tool: ToolEntry,
): () => void {
  const removeResource = resources.add(uri, resource);
  let removeTool: () => void;
  try {
    removeTool = tools.add(tool.name, tool);
  } catch (error) {
    removeResource();
    throw error;
  }
  return () => {
    removeTool();
    removeResource();
  };
}
