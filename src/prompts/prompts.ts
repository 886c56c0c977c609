/** The prompt registry and its extension: `prompts/list`, `prompts/get` and the `prompts` capability. */
import { toPromptResult } from "../content.js";
import type { Completer, Context } from "../context.js";
import { shapeMessages } from "../eras/serialize.js";
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
import { checkGetParams } from "../resources/handler-params.js";
import {
  type CompiledSchema,
  compileSchema,
  formatIssues,
  type InferOutput,
  isRawShape,
  isStandardSchema,
  RAW_SHAPE_FIX,
  type StandardSchemaV1,
} from "../schema/schema.js";
import type { Icon, Meta } from "../types.js";

/** One argument of a prompt, for the list form of `args`. */
export interface PromptArgument {
  name: string;
  title?: string;
  description?: string;
  required?: boolean;
}

type ArgsOf<A> = A extends StandardSchemaV1
  ? InferOutput<A>
  : A extends readonly PromptArgument[]
    ? { [K in A[number] as K["name"]]: K["required"] extends true ? string : string | undefined }
    : Record<string, never>;

/** Options of `server.prompt(name, options)`. */
export interface PromptOptions<
  A extends StandardSchemaV1 | readonly PromptArgument[] | undefined = undefined,
> {
  title?: string;
  description?: string;
  /** The arguments: a Standard Schema object of strings, or a list of `{ name, description, required }`. */
  args?: A;
  /** Completion per argument, for `completion/complete`. */
  complete?: { [K in keyof ArgsOf<A>]?: Completer };
  icons?: Icon[];
  _meta?: Meta;
  /** OAuth scopes a caller needs (all of them) to see, get and complete the prompt. Default: none. */
  scopes?: readonly string[];
  /** 2026-07-28: how long `prompts/list` may be cached (the list takes the shortest ttl, public only if every prompt is). Default: the server's `cache`. */
  cache?: CacheOptions;
  /** Builds the messages: a string (one user message), messages, or a whole result. */
  get: (args: ArgsOf<A>, ctx: Context) => unknown;
}

/** @internal */
export interface PromptEntry extends Scoped {
  readonly name: string;
  readonly listing: { [key: string]: unknown };
  readonly required: readonly string[];
  readonly schema: CompiledSchema | undefined;
  readonly complete: { [key: string]: Completer | undefined };
  readonly description: string | undefined;
  readonly get: (args: any, ctx: Context) => unknown;
  readonly shaped: Map<string, object>;
  readonly cache: CacheHint;
}

/** Validates options and builds the registry entry, as the server's `settings` say; throws on programming mistakes. */
export function createPromptEntry(
  name: string,
  options: PromptOptions<any>,
  settings: ServerSettings,
): PromptEntry {
  if (typeof name !== "string" || name.length === 0) throw new TypeError("A prompt needs a non-empty name");
  if (typeof options?.get !== "function") throw new TypeError(`Prompt "${name}" needs a get function`);
  let args: PromptArgument[] = [];
  let schema: CompiledSchema | undefined;
  let open = false;
  if (isStandardSchema(options.args)) {
    schema = compileSchema(options.args, "input");
    const js = schema.jsonSchema as ObjectSchema & {
      properties?: { [k: string]: { description?: string; title?: string } };
      required?: string[];
    };
    open = mayPassOtherKeys(options.args, js);
    const required = new Set(js.required ?? []);
    args = Object.entries(js.properties ?? {}).map(([argName, p]) => {
      const a: PromptArgument = { name: argName };
      if (p.title !== undefined) a.title = p.title;
      if (p.description !== undefined) a.description = p.description;
      a.required = required.has(argName);
      return a;
    });
  } else if (Array.isArray(options.args)) {
    args = options.args.map((a: PromptArgument) => {
      if (typeof a?.name !== "string" || !a.name)
        throw new TypeError(`Prompt "${name}": every argument needs a name`);
      return { ...a };
    });
  } else if (options.args !== undefined) {
    const fix = isRawShape(options.args) ? `: ${RAW_SHAPE_FIX}` : "";
    throw new TypeError(
      `Prompt "${name}": args must be a Standard Schema object or a list of arguments${fix}`,
    );
  }
  if (!open)
    checkGetParams(
      name,
      args.map((a) => a.name),
      options.get,
    );
  const complete = { ...(options.complete ?? {}) } as { [key: string]: Completer | undefined };
  for (const key of Object.keys(complete)) {
    if (!args.some((a) => a.name === key))
      throw new TypeError(`Prompt "${name}": complete.${key} names no argument`);
  }
  const listing: { [key: string]: unknown } = { name };
  if (options.title !== undefined) listing.title = options.title;
  if (options.description !== undefined) listing.description = options.description;
  if (args.length) listing.arguments = args;
  if (options.icons !== undefined) listing.icons = options.icons;
  if (options._meta !== undefined) listing._meta = options._meta;
  return {
    name,
    listing,
    required: args.filter((a) => a.required).map((a) => a.name),
    schema,
    complete,
    description: options.description,
    get: options.get,
    shaped: new Map(),
    scopes: scopesOption(`Prompt "${name}"`, options.scopes),
    cache: cacheHint(options.cache, settings.cache),
  };
}

type ObjectSchema = {
  properties?: { [k: string]: unknown };
  additionalProperties?: unknown;
  patternProperties?: unknown;
};

/**
 * Whether `get` may receive keys other than the input schema's properties, so that its parameters
 * cannot be checked against them. `get` receives the schema's output: where no output JSON Schema is
 * known (a transform, a library without one) or its keys differ from the input's, nothing is claimed.
 * Anything but `additionalProperties: false` is open (zod writes `{}` for a loose object or a catchall).
 */
function mayPassOtherKeys(args: StandardSchemaV1, input: ObjectSchema): boolean {
  let output: ObjectSchema;
  try {
    output = compileSchema(args, "output").jsonSchema as ObjectSchema;
  } catch {
    return true;
  }
  const keys = (js: ObjectSchema) =>
    Object.keys(js.properties ?? {})
      .sort()
      .join("\0");
  return (
    output.additionalProperties !== false ||
    output.patternProperties !== undefined ||
    keys(output) !== keys(input)
  );
}

const PROMPTS = Object.freeze({ prompts: Object.freeze({ listChanged: true }) });

/** The prompts of `prompts`: the `prompts` capability while any is registered, `prompts/list` and `prompts/get`. */
export function promptsExtension(prompts: Registry<PromptEntry>, settings: ServerSettings): Extension {
  return {
    id: "picomcp/prompts",
    capabilities: () => (prompts.size > 0 ? PROMPTS : undefined),
    methods: {
      "prompts/list": {
        run: (p, ctx) => listPage("prompts", prompts.values(), p, ctx, settings),
      },
      "prompts/get": { input: true, run: (p, ctx) => getPrompt(prompts, p, ctx) },
    },
  };
}

/** `prompts/get`: an unknown prompt, a missing required or an invalid argument is -32602. */
export async function getPrompt(
  prompts: Registry<PromptEntry>,
  params: { [key: string]: unknown },
  ctx: Context,
) {
  const name = params.name;
  if (typeof name !== "string")
    throw new McpError(ErrorCode.InvalidParams, "prompts/get needs a string name");
  const prompt = prompts.get(name);
  if (!prompt) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${name}`, { name });
  requireScopes(`prompt ${name}`, prompt, ctx);
  const raw = params.arguments ?? {};
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new McpError(ErrorCode.InvalidParams, "prompts/get arguments must be an object of strings");
  }
  const given = raw as { [key: string]: unknown };
  for (const [k, v] of Object.entries(given)) {
    if (typeof v !== "string")
      throw new McpError(ErrorCode.InvalidParams, `Argument ${k} of prompt ${name} must be a string`);
  }
  const missing = prompt.required.filter((a) => !Object.hasOwn(given, a) || given[a] === undefined);
  if (missing.length) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Missing required argument${missing.length > 1 ? "s" : ""} for prompt ${name}: ${missing.join(", ")}`,
      { missing },
    );
  }
  let args: unknown = given;
  if (prompt.schema) {
    const checked = await prompt.schema.validate(given);
    if (!checked.ok)
      throw new McpError(
        ErrorCode.InvalidParams,
        `Invalid arguments for prompt ${name}: ${formatIssues(checked.issues)}`,
      );
    args = checked.value;
  }
  const result = toPromptResult(await prompt.get(args, ctx), prompt.description);
  const messages = shapeMessages(result.messages, ctx.features);
  return messages === result.messages ? result : { ...result, messages };
}
