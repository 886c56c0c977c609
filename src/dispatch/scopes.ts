/**
 * The scopes a request needs for the primitives it names: a tool, a prompt, a resource or a template,
 * every resource a subscription or a listen watches. `picomcp/auth` asks when a token lacks the
 * server's own scopes, so that its one challenge names all the request needs (SEP-2350).
 */
import type { PromptEntry } from "../prompts/prompts.js";
import type { Registry, Scoped } from "../registry.js";
import type { ResourceRegistry } from "../resources/resources.js";
import type { ToolEntry } from "../tools/tools.js";
import { isObject } from "../types.js";

/** The registries of the primitives a request may name. */
export interface Primitives {
  readonly tools: Registry<ToolEntry>;
  readonly prompts: Registry<PromptEntry>;
  readonly resources: ResourceRegistry;
}

// a batch, or a listen, names at most this many: the rest cannot add to a challenge worth sending
const MOST = 1000;

/** The scopes the primitives of a parsed message (a request or a batch) need, each once; none for what names none. */
export function operationScopes(reg: Primitives, message: unknown): readonly string[] {
  const out = new Set<string>();
  for (const one of (Array.isArray(message) ? message : [message]).slice(0, MOST)) {
    if (!isObject(one) || typeof one.method !== "string") continue;
    const params = isObject(one.params) ? one.params : {};
    for (const entry of named(reg, one.method, params)) for (const s of entry?.scopes ?? []) out.add(s);
  }
  return [...out];
}

/** The entries a method with `params` names (undefined for a name that is not registered). */
function named(reg: Primitives, method: string, params: { [key: string]: unknown }): (Scoped | undefined)[] {
  const text = (v: unknown) => (typeof v === "string" ? v : undefined);
  const resource = (uri: unknown) => {
    const u = text(uri);
    return u === undefined ? undefined : reg.resources.resolve(u)?.entry;
  };
  switch (method) {
    case "tools/call": {
      const name = text(params.name);
      return [name === undefined ? undefined : reg.tools.get(name)];
    }
    case "prompts/get": {
      const name = text(params.name);
      return [name === undefined ? undefined : reg.prompts.get(name)];
    }
    case "resources/read":
    case "resources/subscribe":
      return [resource(params.uri)];
    case "completion/complete": {
      const ref = isObject(params.ref) ? params.ref : {};
      const name = text(ref.name);
      const uri = text(ref.uri);
      if (ref.type === "ref/prompt" && name !== undefined) return [reg.prompts.get(name)];
      return ref.type === "ref/resource" && uri !== undefined ? [reg.resources.templateByUri(uri)] : [];
    }
    case "subscriptions/listen": {
      const uris = isObject(params.notifications) ? params.notifications.resourceSubscriptions : undefined;
      return Array.isArray(uris) ? uris.slice(0, MOST).map(resource) : [];
    }
    default:
      return [];
  }
}
