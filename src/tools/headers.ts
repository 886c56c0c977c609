/**
 * Tool arguments mirrored into HTTP headers (`"x-mcp-header"` in the `inputSchema`, 2026-07-28): read
 * and checked once, when the tool is registered.
 */

import { isObject } from "../types.js";

/** One tool argument mirrored into a `Mcp-Param-<name>` header. */
export interface HeaderParam {
  /** The chain of `properties` keys from the schema root. */
  readonly path: readonly string[];
  /** The name after `Mcp-Param-`, as the schema spells it. */
  readonly name: string;
  /** The lower-case header name, `mcp-param-<name>`. */
  readonly header: string;
  /** The argument's type: integers compare numerically, booleans as `true`/`false`. */
  readonly type: "string" | "integer" | "boolean";
}

const NONE: readonly HeaderParam[] = Object.freeze([]);
const TCHAR = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const KEY = "x-mcp-header";

/**
 * The `x-mcp-header` arguments of an `inputSchema`. Throws (a programming mistake) when an annotation
 * breaks the spec's rules — a client would silently drop such a tool: the value must be a header
 * token, unique regardless of case, on a string, integer or boolean property reached through
 * `properties` keys only (not `items`, `anyOf`, `$ref`, `$defs`, …).
 */
export function headerParams(inputSchema: unknown, tool: string): readonly HeaderParam[] {
  const out: HeaderParam[] = [];
  const fail = (where: string, why: string): never => {
    throw new TypeError(`Tool "${tool}": the "${KEY}" at ${where || "the schema root"} ${why}`);
  };
  const walk = (node: unknown, at: string, path: string[] | undefined): void => {
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) walk(item, `${at}/${i}`, undefined);
      return;
    }
    if (!isObject(node)) return;
    if (KEY in node) {
      const name = node[KEY];
      if (path === undefined || path.length === 0)
        fail(at, "is only allowed on a property reached through properties");
      if (typeof name !== "string" || !TCHAR.test(name))
        fail(at, "must be a header name token (letters, digits, !#$%&'*+.^_`|~-)");
      const type = node.type;
      if (type !== "string" && type !== "integer" && type !== "boolean") {
        fail(at, 'is only allowed on a property of type "string", "integer" or "boolean"');
      }
      const header = `mcp-param-${(name as string).toLowerCase()}`;
      if (out.some((p) => p.header === header))
        fail(at, `repeats ${JSON.stringify(name)} (names are case-insensitive)`);
      out.push({ path: path!, name: name as string, header, type: type as HeaderParam["type"] });
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === KEY) continue;
      if (key === "properties" && isObject(value) && path !== undefined) {
        for (const [prop, schema] of Object.entries(value))
          walk(schema, `${at}/properties/${prop}`, [...path, prop]);
      } else walk(value, `${at}/${key}`, undefined);
    }
  };
  walk(inputSchema, "", []);
  return out.length ? Object.freeze(out) : NONE;
}
