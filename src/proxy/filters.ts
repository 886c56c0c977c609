/** What a proxy shows of the remote server: the tools, prompts and resources it hides, and the tools it renames (with the way back). */

/** Hides an item: a list of names (URIs for resources), or a predicate on the remote's listing of it. */
export type Hide<T> = readonly string[] | ((item: T) => boolean);

/** A tool as the remote lists it (its fields as they are on the wire). */
export interface RemoteTool {
  readonly name: string;
  readonly description?: string;
  readonly annotations?: {
    readonly readOnlyHint?: boolean;
    readonly destructiveHint?: boolean;
    readonly idempotentHint?: boolean;
    readonly openWorldHint?: boolean;
    readonly [key: string]: unknown;
  };
  readonly [key: string]: unknown;
}
/** A prompt as the remote lists it. */
export interface RemotePrompt {
  readonly name: string;
  readonly [key: string]: unknown;
}
/** A resource (`uri`) or a resource template (`uriTemplate`) as the remote lists it. */
export interface RemoteResource {
  readonly name: string;
  readonly uri?: string;
  readonly uriTemplate?: string;
  readonly [key: string]: unknown;
}

/** What the proxy shows of the remote. Hidden items are neither listed nor callable (an unknown name, a resource not found). */
export interface ProxyFilters {
  /** Tools to hide, and to rename: `{ search: "docs_search" }`, or a function of the remote name (same name: unchanged). */
  tools?: {
    hide?: Hide<RemoteTool>;
    rename?: { readonly [remote: string]: string } | ((name: string) => string);
  };
  /** Prompts to hide. */
  prompts?: { hide?: Hide<RemotePrompt> };
  /** Resources and templates to hide: their URIs (or URI templates), or a predicate. */
  resources?: { hide?: Hide<RemoteResource> };
}

function hider<T>(hide: Hide<T> | undefined, key: (item: T) => string | undefined): (item: T) => boolean {
  if (hide === undefined) return () => false;
  if (typeof hide === "function") return hide;
  const names = new Set(hide);
  return (item) => {
    const k = key(item);
    return k !== undefined && names.has(k);
  };
}

const NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** The filters, compiled once: what is shown, and the tool names both ways. */
export class Filters {
  readonly hideTool: (tool: RemoteTool) => boolean;
  readonly hidePrompt: (prompt: RemotePrompt) => boolean;
  readonly hideResource: (resource: RemoteResource) => boolean;
  readonly #rename: (name: string) => string;

  constructor(filters: ProxyFilters = {}) {
    this.hideTool = hider(filters.tools?.hide, (t) => t.name);
    this.hidePrompt = hider(filters.prompts?.hide, (p) => p.name);
    this.hideResource = hider(filters.resources?.hide, (r) => r.uri ?? r.uriTemplate);
    const rename = filters.tools?.rename;
    if (rename === undefined) this.#rename = (name) => name;
    else if (typeof rename === "function") this.#rename = rename;
    else {
      for (const [from, to] of Object.entries(rename))
        if (typeof to !== "string" || !NAME.test(to))
          throw new TypeError(
            `createProxy: tools.rename maps "${from}" to ${JSON.stringify(to)}: use 1-128 characters of A-Z a-z 0-9 _ - .`,
          );
      const table = new Map(Object.entries(rename));
      this.#rename = (name) => table.get(name) ?? name;
    }
  }

  /**
   * The tools shown, renamed, and the table from a shown name back to the remote's. Throws when two
   * remote tools would show under one name (a rename onto another tool's name), naming both.
   */
  tools(remote: readonly RemoteTool[]): { listed: object[]; back: Map<string, string> } {
    const listed: object[] = [];
    const back = new Map<string, string>();
    for (const tool of remote) {
      if (this.hideTool(tool)) continue;
      const shown = this.#rename(tool.name);
      const taken = back.get(shown);
      if (taken !== undefined)
        throw new Error(
          `createProxy: the remote tools "${taken}" and "${tool.name}" would both be shown as "${shown}"`,
        );
      back.set(shown, tool.name);
      listed.push(shown === tool.name ? tool : { ...tool, name: shown });
    }
    return { listed, back };
  }
}
