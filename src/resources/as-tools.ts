/**
 * Resources as tools, for clients that only call tools: `list_resources` and `read_resource`, answered
 * by the same code as `resources/list`, `resources/templates/list` and `resources/read`.
 */
import type { Context } from "../context.js";
import type { CacheHint, CacheOptions } from "../eras/stateless.js";
import { McpError } from "../errors.js";
import type { Registry } from "../registry.js";
import { createToolEntry, type ToolEntry } from "../tools/tools.js";
import type { CallToolResult } from "../types.js";
import { extendContext } from "../views/context-view.js";
import { listResources, listResourceTemplates, type ResourceRegistry, readResource } from "./resources.js";

/** Options of `server.resourcesAsTools(options)`. */
export interface ResourcesAsToolsOptions {
  /** The name of the tool that lists resources and templates. Default: `"list_resources"`. */
  listName?: string;
  /** The name of the tool that reads one resource by URI. Default: `"read_resource"`. */
  readName?: string;
}

const READ_ONLY = Object.freeze({ readOnlyHint: true, idempotentHint: true, openWorldHint: false });

/**
 * Runs a resource method inside a tool call, in a view of `ctx` that drops its caching hint: the
 * hint belongs to the resource method, not to the `tools/call` result.
 */
async function asResourceMethod<T>(ctx: Context, run: (ctx: Context) => T | Promise<T>): Promise<T> {
  return run(extendContext(ctx, { cache: ignoreHint }));
}

const ignoreHint = (_hint: CacheOptions | CacheHint) => {};

/** A protocol error of the resource method, as a tool result the model can read. */
function failed(error: unknown): CallToolResult {
  if (!(error instanceof McpError)) throw error;
  return { content: [{ type: "text", text: error.message }], isError: true };
}

/**
 * Adds the bridge's two tools to `tools` and a watcher to `watchers` (the server calls each when its
 * resources change) that renews `read_resource` when the templates its description names changed;
 * the function returned takes both tools and the watcher away.
 */
export function addResourceTools(
  tools: Registry<ToolEntry>,
  bridge: ResourceTools,
  watchers: Set<() => void>,
): () => void {
  const add = (entry: ToolEntry) => tools.add(entry.name, entry);
  const removeList = add(bridge.list());
  let removeRead: () => void;
  try {
    removeRead = add(bridge.read());
  } catch (error) {
    removeList();
    throw error;
  }
  const sync = () => {
    if (!bridge.stale) return;
    removeRead();
    removeRead = add(bridge.read());
  };
  watchers.add(sync);
  return () => {
    watchers.delete(sync);
    removeList();
    removeRead();
  };
}

/** The two tools of the bridge; `read()` is rebuilt when the templates its description names change. */
export class ResourceTools {
  readonly listName: string;
  readonly readName: string;
  readonly #reg: ResourceRegistry;
  #description = "";

  /** The tools over `reg`, made as its settings (the server's) say. */
  constructor(reg: ResourceRegistry, options: ResourcesAsToolsOptions = {}) {
    this.#reg = reg;
    this.listName = options.listName ?? "list_resources";
    this.readName = options.readName ?? "read_resource";
    if (this.listName === this.readName)
      throw new TypeError("resourcesAsTools: listName and readName must differ");
  }

  /** `list_resources`: one page of `resources/list`, and every template the caller may see. */
  list(): ToolEntry {
    const reg = this.#reg;
    return createToolEntry(
      this.listName,
      {
        description: `Lists the server's resources (one page; pass nextCursor back as cursor for the next) and its URI templates. Read one with ${this.readName}.`,
        input: {
          type: "object",
          properties: { cursor: { type: "string", description: "nextCursor of the previous page" } },
        },
        annotations: READ_ONLY,
        run: (args, ctx) =>
          asResourceMethod(ctx, async (rc) => {
            try {
              const page = await listResources(reg, { cursor: (args as { cursor?: string }).cursor }, rc);
              // every template on one page
              const all = { ...reg.settings, pageSize: Math.max(1, reg.templates.length) };
              const templates = listResourceTemplates(reg, {}, rc, all);
              const value = { ...page, resourceTemplates: templates.resourceTemplates };
              return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value };
            } catch (error) {
              return failed(error);
            }
          }),
      },
      reg.settings,
    );
  }

  /** Whether `read()` would describe other templates than the tool registered last. */
  get stale(): boolean {
    return this.#describe() !== this.#description;
  }

  /** `read_resource`: `resources/read` of one URI, its contents as embedded resources. */
  read(): ToolEntry {
    const reg = this.#reg;
    this.#description = this.#describe();
    return createToolEntry(
      this.readName,
      {
        description: this.#description,
        input: {
          type: "object",
          properties: { uri: { type: "string", description: "The resource's URI" } },
          required: ["uri"],
        },
        annotations: READ_ONLY,
        run: (args, ctx) =>
          asResourceMethod(ctx, async (rc) => {
            try {
              const { contents } = await readResource(reg, { uri: (args as { uri: string }).uri }, rc);
              return { content: contents.map((resource) => ({ type: "resource", resource })) };
            } catch (error) {
              return failed(error);
            }
          }),
      },
      reg.settings,
    );
  }

  #describe(): string {
    const lines = [
      `Reads one resource by its URI, exactly as resources/read does. ${this.listName} names the concrete ones.`,
    ];
    // a scoped template is not named to everyone who can list tools
    const open = this.#reg.templates.filter((t) => !t.scopes);
    if (open.length > 0) lines.push("URI templates (RFC 6570; fill the {variables}):");
    for (const t of open) {
      const about = t.options.description ?? t.options.title;
      lines.push(`- ${t.key}${about ? ` — ${about}` : ""}`);
    }
    return lines.join("\n");
  }
}
