/** The tool registry and its extension: `tools/list`, `tools/call` and the `tools` capability. */

import { toCallToolResult } from "../content.js";
import type { Context } from "../context.js";
import { InputRequiredSignal } from "../eras/input.js";
import { shapeCallToolResult } from "../eras/serialize.js";
import { type CacheHint, type CacheOptions, cacheHint } from "../eras/stateless.js";
import { ErrorCode, McpError } from "../errors.js";
import type { Extension } from "../extension.js";
import {
  listPage,
  type Registry,
  requireScopes,
  type Scoped,
  type ServerSettings,
  scopesOption,
} from "../registry.js";
import {
  CHECK,
  type Check,
  type CompiledSchema,
  compileSchema,
  formatIssues,
  type InferOutput,
  Invalid,
  isRawShape,
  Pending,
  type SchemaLike,
  type SchemaResult,
} from "../schema/schema.js";
import {
  type Awaitable,
  type CallToolResult,
  type Icon,
  isPromiseLike,
  type Meta,
  type ToolAnnotations,
} from "../types.js";
import { type HeaderParam, headerParams } from "./headers.js";

/** Options of `server.tool(name, options)`. */
export interface ToolOptions<
  I extends SchemaLike | undefined = undefined,
  O extends SchemaLike | undefined = undefined,
> {
  /** Display name. */
  title?: string;
  /** What the tool does, for the model. */
  description?: string;
  /** The arguments: a Standard Schema (zod, valibot, arktype) or a plain JSON Schema. Default: no arguments. */
  input?: I;
  /** The structured result: its value is validated and sent as `structuredContent` plus its JSON text. */
  output?: O;
  /** Behaviour hints (`readOnlyHint`, `destructiveHint`, …). */
  annotations?: ToolAnnotations;
  /** Icons (2025-11-25 and later). */
  icons?: Icon[];
  /** Metadata passed through to `tools/list`. */
  _meta?: Meta;
  /** OAuth scopes a caller needs (all of them) to see and call the tool. Default: none. */
  scopes?: readonly string[];
  /** 2026-07-28: how long `tools/list` may be cached; the list takes the shortest ttl and is public only if every tool is. Default: the server's `cache`. */
  cache?: CacheOptions;
  /**
   * Tasks (2026-07-28, the `io.modelcontextprotocol/tasks` extension): `"optional"` lets the handler
   * turn a call into a task with `await ctx.task()`; `"required"` also refuses (-32021) a client that
   * did not declare the extension. Default: never a task.
   */
  task?: "optional" | "required";
  /** Runs the tool: returns a string, a content block, an array of them, `link(...)`, a whole result, or (with `output`) the structured value. */
  run: (
    args: I extends SchemaLike ? InferOutput<I> : Record<string, never>,
    ctx: Context,
  ) =>
    | (O extends SchemaLike ? InferOutput<O> : unknown)
    | Promise<O extends SchemaLike ? InferOutput<O> : unknown>;
}

/** @internal */
export interface ToolEntry extends Scoped {
  readonly name: string;
  readonly listing: { [key: string]: unknown };
  readonly input: CompiledSchema | undefined;
  readonly output: CompiledSchema | undefined;
  readonly run: (args: any, ctx: Context) => unknown;
  readonly shaped: Map<string, object>;
  readonly cache: CacheHint;
  /** The arguments mirrored into `Mcp-Param-*` headers over HTTP (2026-07-28). */
  readonly headers: readonly HeaderParam[];
  /** Whether a call may become a task. */
  readonly task: "optional" | "required" | undefined;
}

const NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const EMPTY_INPUT = Object.freeze({ type: "object", properties: {} });

/** Validates options and builds the registry entry, as the server's `settings` say; throws on programming mistakes. */
export function createToolEntry(
  name: string,
  options: ToolOptions<any, any>,
  settings: ServerSettings,
): ToolEntry {
  const validator = settings.jsonSchemaValidator;
  if (typeof name !== "string" || !NAME.test(name)) {
    throw new TypeError(
      `Invalid tool name ${JSON.stringify(name)}: use 1-128 characters of A-Z a-z 0-9 _ - . (no spaces or commas)`,
    );
  }
  if (typeof options?.run !== "function")
    throw new TypeError(`Tool "${name}" needs a run function${v1Hint(options)}`);
  const input = options.input === undefined ? undefined : compileSchema(options.input, "input", validator);
  const output =
    options.output === undefined ? undefined : compileSchema(options.output, "output", validator);
  const listing: { [key: string]: unknown } = { name };
  if (options.title !== undefined) listing.title = options.title;
  if (options.description !== undefined) listing.description = options.description;
  listing.inputSchema = input ? input.jsonSchema : EMPTY_INPUT;
  if (output) listing.outputSchema = output.jsonSchema;
  if (options.annotations !== undefined) listing.annotations = options.annotations;
  if (options.icons !== undefined) listing.icons = options.icons;
  if (options._meta !== undefined) listing._meta = options._meta;
  const task = options.task;
  if (task !== undefined && task !== "optional" && task !== "required")
    throw new TypeError(`Tool "${name}": task must be "optional" or "required"`);
  // 2025-11-25 lists it (the client asks for the task); the revisions before and after drop it
  if (task !== undefined) listing.execution = { taskSupport: task };
  return {
    task,
    name,
    listing,
    input,
    output,
    run: options.run,
    shaped: new Map(),
    cache: cacheHint(options.cache, settings.cache),
    headers: headerParams(listing.inputSchema, name),
    scopes: scopesOption(`Tool "${name}"`, options.scopes),
  };
}

const TOOLS = Object.freeze({ tools: Object.freeze({ listChanged: true }) });

/** The tools of `tools`: the `tools` capability while any is registered, `tools/list` and `tools/call`. */
export function toolsExtension(
  tools: Registry<ToolEntry>,
  settings: ServerSettings,
  report: (error: unknown, name: string, ctx: Context) => void,
): Extension {
  return {
    id: "picomcp/tools",
    capabilities: () => (tools.size > 0 ? TOOLS : undefined),
    methods: {
      "tools/list": {
        run: (p, ctx) => listPage("tools", tools.values(), p, ctx, settings),
      },
      "tools/call": {
        input: true,
        run: (p, ctx) => callTool(tools, p, ctx, report),
      },
    },
  };
}

/**
 * `tools/call`: validation failures and thrown errors are results with `isError`; `McpError` is a protocol
 * error. Synchronous end to end when the schemas and `run` are: a promise only where one of them gave one.
 * A thrown error other than an `McpError` also goes to `report` (the server's `onError`), as in any handler;
 * the function that reports it is made only when something fails, or a step returns a promise.
 */
export function callTool(
  tools: Registry<ToolEntry>,
  params: { [key: string]: unknown },
  ctx: Context,
  report: (error: unknown, name: string, ctx: Context) => void = () => {},
): Awaitable<CallToolResult> {
  const name = params.name;
  if (typeof name !== "string") throw new McpError(ErrorCode.InvalidParams, "tools/call needs a string name");
  const tool = tools.get(name);
  if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`, { name });
  requireScopes(`tool ${name}`, tool, ctx);
  const rawArgs = params.arguments ?? {};
  if (typeof rawArgs !== "object" || rawArgs === null || Array.isArray(rawArgs)) {
    throw new McpError(ErrorCode.InvalidParams, "tools/call arguments must be an object");
  }
  let out: Awaitable<CallToolResult>;
  try {
    const input = tool.input;
    const check = (input as { [CHECK]?: Check } | undefined)?.[CHECK];
    out = check
      ? afterCheck(tool, check(rawArgs), ctx)
      : input
        ? afterInput(tool, input.validate(rawArgs), ctx)
        : afterRun(tool, tool.run(rawArgs, ctx), ctx);
  } catch (error) {
    return failed(error, name, ctx, report);
  }
  return isPromiseLike(out) ? out.then(undefined, failing(name, ctx, report)) : out;
}

/**
 * What reports a late failure of the call `name`: made here, not in `callTool`, whose own variables a
 * closure there would move into a context allocated on every call.
 */
function failing(name: string, ctx: Context, report: (error: unknown, name: string, ctx: Context) => void) {
  return (error: unknown) => failed(error, name, ctx, report);
}

// the steps of a call: each runs at once on a value at hand, after the promise when given one

/** The input as a schema compiled by picomcp checked it (see `CHECK`): the value, `Invalid` or `Pending`. */
function afterCheck(tool: ToolEntry, checked: unknown, ctx: Context): Awaitable<CallToolResult> {
  if (checked instanceof Pending) return afterInput(tool, checked.promise, ctx);
  if (checked instanceof Invalid)
    return errorResult(`Invalid arguments for tool ${tool.name}: ${formatIssues(checked.issues)}`);
  return afterRun(tool, tool.run(checked, ctx), ctx);
}

function afterInput(tool: ToolEntry, checked: Awaitable<SchemaResult>, ctx: Context) {
  if (isPromiseLike(checked)) return checked.then((c): Awaitable<CallToolResult> => afterInput(tool, c, ctx));
  if (!checked.ok)
    return errorResult(`Invalid arguments for tool ${tool.name}: ${formatIssues(checked.issues)}`);
  return afterRun(tool, tool.run(checked.value, ctx), ctx);
}

function afterRun(tool: ToolEntry, value: unknown, ctx: Context): Awaitable<CallToolResult> {
  if (isPromiseLike(value)) return Promise.resolve(value).then((v) => afterRun(tool, v, ctx));
  if (!tool.output) return shapeCallToolResult(toCallToolResult(value, tool.name), ctx.features);
  return afterOutput(tool, tool.output.validate(value), ctx);
}

function afterOutput(
  tool: ToolEntry,
  checked: Awaitable<SchemaResult>,
  ctx: Context,
): Awaitable<CallToolResult> {
  if (isPromiseLike(checked)) return checked.then((c) => afterOutput(tool, c, ctx));
  if (!checked.ok)
    return errorResult(
      `Tool ${tool.name} returned invalid structured content: ${formatIssues(checked.issues)}`,
    );
  const text = JSON.stringify(checked.value);
  const result = { content: [{ type: "text", text: text ?? "null" }], structuredContent: checked.value };
  return shapeCallToolResult(result as CallToolResult, ctx.features);
}

/**
 * A failing schema or handler is the tool's error result, and reported; an `McpError` stays a protocol
 * error, and a call that asks the client (2026-07-28) ends its round, not a failure to report.
 */
function failed(
  error: unknown,
  name: string,
  ctx: Context,
  report: (error: unknown, name: string, ctx: Context) => void,
): CallToolResult {
  if (error instanceof McpError || error instanceof InputRequiredSignal) throw error;
  report(error, name, ctx);
  return errorResult(error instanceof Error ? error.message : String(error));
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

/** What to change when `options` has a shape of SDK v1's `tool()` or `registerTool()`, else "". */
function v1Hint(options: unknown): string {
  const form = "server.tool(name, { description, input: z.object({ … }), run: handler })";
  if (typeof options === "string")
    return `: the second argument is the options object, not a description (SDK v1's tool(name, description, shape, handler) is ${form})`;
  if (typeof options === "function")
    return `: the handler goes under run (SDK v1's tool(name, handler) is server.tool(name, { run: handler }))`;
  if (isRawShape(options))
    return `: the second argument is the options object, not a raw shape (SDK v1's tool(name, shape, handler) is ${form})`;
  if (typeof options === "object" && options !== null && "inputSchema" in options)
    return `: inputSchema is SDK v1's name (registerTool's config); here it is input, wrapped in z.object, and the handler is run: ${form}`;
  return "";
}
