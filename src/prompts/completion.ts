/** `completion/complete` for prompt arguments and resource-template variables. */
import type { Completer, CompletionAnswer, Context } from "../context.js";
import { ErrorCode, McpError } from "../errors.js";
import type { Extension } from "../extension.js";
import { type Registry, requireScopes } from "../registry.js";
import type { ResourceRegistry } from "../resources/resources.js";
import { extendContext } from "../views/context-view.js";
import type { PromptEntry } from "./prompts.js";

const MAX_VALUES = 100;

const COMPLETIONS = Object.freeze({ completions: Object.freeze({}) });

/** Completion: the `completions` capability while a prompt or a template is registered, `completion/complete`. */
export function completionExtension(prompts: Registry<PromptEntry>, resources: ResourceRegistry): Extension {
  return {
    id: "picomcp/completion",
    capabilities: (f) =>
      f.completionsCapability && (prompts.size > 0 || resources.templates.length > 0)
        ? COMPLETIONS
        : undefined,
    methods: {
      "completion/complete": { run: (p, ctx) => complete(prompts, resources, p, ctx) },
    },
  };
}

/** Answers `completion/complete`: at most 100 values, with `total` and `hasMore` when there are more. */
export async function complete(
  prompts: Registry<PromptEntry>,
  resources: ResourceRegistry,
  params: { [key: string]: unknown },
  ctx: Context,
) {
  const ref = params.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined;
  const argument = params.argument as { name?: unknown; value?: unknown } | undefined;
  if (typeof argument?.name !== "string" || typeof argument.value !== "string") {
    throw new McpError(
      ErrorCode.InvalidParams,
      "completion/complete needs argument.name and argument.value strings",
    );
  }
  let completer: Completer | undefined;
  if (ref?.type === "ref/prompt" && typeof ref.name === "string") {
    const prompt = prompts.get(ref.name);
    if (!prompt)
      throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${ref.name}`, { name: ref.name });
    requireScopes(`prompt ${ref.name}`, prompt, ctx);
    completer = own(prompt.complete, argument.name);
  } else if (ref?.type === "ref/resource" && typeof ref.uri === "string") {
    const template = resources.templateByUri(ref.uri);
    if (!template)
      throw new McpError(ErrorCode.InvalidParams, `Unknown resource template: ${ref.uri}`, { uri: ref.uri });
    requireScopes(`resource template ${ref.uri}`, template, ctx);
    completer = own(template.options.complete as { [key: string]: Completer | undefined }, argument.name);
  } else {
    throw new McpError(
      ErrorCode.InvalidParams,
      'completion/complete needs a ref of type "ref/prompt" or "ref/resource"',
    );
  }
  if (!completer) return { completion: { values: [] } };
  const context = params.context as { arguments?: unknown } | undefined;
  const chosen = context?.arguments;
  const args =
    typeof chosen === "object" && chosen !== null && !Array.isArray(chosen)
      ? (chosen as { [k: string]: string })
      : {};
  // a view of the request's context: what it adds is the completer's alone
  const answer: CompletionAnswer = await completer(argument.value, extendContext(ctx, { arguments: args }));
  return { completion: toCompletion(answer) };
}

/** The completer named `name` (a name from the wire: "constructor" must not reach Object.prototype). */
function own(
  table: { [key: string]: Completer | undefined } | undefined,
  name: string,
): Completer | undefined {
  return table !== undefined && Object.hasOwn(table, name) ? table[name] : undefined;
}

function toCompletion(answer: CompletionAnswer): { values: string[]; total?: number; hasMore?: boolean } {
  const all = Array.isArray(answer) ? answer : (answer as { values: readonly string[] }).values;
  if (!Array.isArray(all) || !all.every((v) => typeof v === "string")) {
    throw new TypeError("A completer must return strings, or { values: string[] }");
  }
  const values = all.slice(0, MAX_VALUES);
  const out: { values: string[]; total?: number; hasMore?: boolean } = { values };
  if (!Array.isArray(answer)) {
    const a = answer as { total?: number; hasMore?: boolean };
    if (a.total !== undefined) out.total = a.total;
    if (a.hasMore !== undefined) out.hasMore = a.hasMore;
  }
  if (all.length > MAX_VALUES) {
    out.total ??= all.length;
    out.hasMore = true;
  }
  return out;
}
