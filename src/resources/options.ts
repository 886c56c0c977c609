/** What `server.resource(uri, options)` takes: the options of a resource or a template, typed from its URI. */
import type { Completer, Context, ResourceContext } from "../context.js";
import type { CacheOptions } from "../eras/stateless.js";
import type { Resource, ResourceDetails } from "../types.js";
import type { UriParams, UriVariableName } from "./params.js";

/** A concrete resource a template's `list` enumerates. */
export type ListedResource = Resource;

/** Options of `server.resource(uri, options)`. */
export interface ResourceOptions<U extends string> extends ResourceDetails {
  /** Identifier shown to users. Default: the URI. */
  name?: string;
  /** Path safety for this resource's variables. Default: the server's `pathSafety` (on). */
  pathSafety?: boolean;
  /** Variables exempt from path safety (their values may contain `..`, absolute paths, …). */
  unsafe?: readonly UriVariableName<U>[];
  /** OAuth scopes a caller needs (all of them) to see, read and complete this resource or template. Default: none. */
  scopes?: readonly string[];
  /** Templates: enumerates concrete resources into `resources/list`. */
  list?: (ctx: Context) => readonly ListedResource[] | Promise<readonly ListedResource[]>;
  /** 2026-07-28: how long `resources/read` of it (and the lists naming it) may be cached; `"public"` only if every caller reads the same. Default: the server's `cache`. */
  cache?: CacheOptions;
  /** Templates: completion per variable for `completion/complete`. */
  complete?: { [K in UriVariableName<U>]?: Completer };
  /** Reads the resource: the variables of the URI first, the context (with the concrete `uri`) second. */
  read: (params: UriParams<U>, ctx: ResourceContext) => unknown;
}

/** The URI string of what SDK v1 took for a URI: a string, or a `ResourceTemplate` (its `uriTemplate`). */
function v1Uri(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  const t = typeof v === "object" && v !== null ? (v as { uriTemplate?: unknown }).uriTemplate : undefined;
  return t === undefined ? undefined : String(t);
}

/**
 * What to change when `server.resource(a, b, …)` has a shape of SDK v1's `resource(name, uri, [metadata,]
 * read)`, `resource(name, new ResourceTemplate(…), read)` or `resource(uri, read)`; else "".
 */
export function v1ResourceHint(first: unknown, options: unknown): string {
  const uri = v1Uri(options);
  if (uri !== undefined && typeof first === "string")
    return `server.resource(${JSON.stringify(first)}, ${typeof options === "string" ? "…" : "new ResourceTemplate(…)"}, read) is SDK v1's: the URI comes first and everything else goes in one options object, server.resource(${JSON.stringify(uri)}, { name: ${JSON.stringify(first)}, …metadata, read }), whose read returns the text, the bytes or a value for JSON`;
  if (typeof options === "function")
    return `Resource ${String(first)}: the read function goes under read, server.resource(${JSON.stringify(first)}, { read }) (SDK v1's resource(uri, read))`;
  return "";
}

/** What to write for SDK v1's `registerResource`, `registerTool` or `registerPrompt` (not methods here). */
export function v1RegisterHint(method: string, args: readonly unknown[]): string {
  const name = JSON.stringify(typeof args[0] === "string" ? args[0] : "name");
  const form =
    method === "registerResource"
      ? `server.resource(${JSON.stringify(v1Uri(args[1]) ?? "scheme://…")}, { name: ${name}, …metadata, read })`
      : method === "registerTool"
        ? `server.tool(${name}, { title, description, input: z.object(inputSchema), output, annotations, run })`
        : `server.prompt(${name}, { title, description, args: z.object(argsSchema), get })`;
  return `server.${method}(…) is SDK v1's; here it is ${form} (see the migration guide, docs/migrate.md)`;
}
