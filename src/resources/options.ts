/** What `server.resource(uri, options)` takes: the options of a resource or a template, typed from its URI. */
import type { Completer, RequestContext, ResourceContext } from "../context.js";
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
  list?: (ctx: RequestContext) => readonly ListedResource[] | Promise<readonly ListedResource[]>;
  /** 2026-07-28: how long `resources/read` of it (and the lists naming it) may be cached; `"public"` only if every caller reads the same. Default: the server's `cache`. */
  cache?: CacheOptions;
  /** Templates: completion per variable for `completion/complete`. */
  complete?: { [K in UriVariableName<U>]?: Completer };
  /** Reads the resource: the variables of the URI first, the context (with the concrete `uri`) second. */
  read: (params: UriParams<U>, ctx: ResourceContext) => unknown;
}
