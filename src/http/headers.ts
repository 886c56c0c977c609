/**
 * The request headers of the 2026-07-28 revision that mirror the body (`MCP-Protocol-Version`,
 * `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`), their `=?base64?…?=` form, and the check that they agree.
 */

import type { HeaderParam } from "../tools/headers.js";
import { isObject } from "../types.js";

const PRINTABLE = /^[\x20-\x7e\t]*$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** A JSON number: no hex, octal or binary forms, no sign but minus, no leading zeros, no separators. */
const DECIMAL = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const PREFIX = "=?base64?";
const SUFFIX = "?=";

/**
 * A header value as the client meant it: trimmed, and `=?base64?…?=` decoded (strict: the
 * alphabet, the padding, UTF-8). Undefined when it cannot be read (bad Base64, or a plain value
 * with characters a header may not carry).
 */
export function decodeHeaderValue(raw: string): string | undefined {
  const v = raw.trim();
  if (v.length >= PREFIX.length + SUFFIX.length && v.startsWith(PREFIX) && v.endsWith(SUFFIX)) {
    const b64 = v.slice(PREFIX.length, v.length - SUFFIX.length);
    if (!BASE64.test(b64)) return undefined;
    try {
      const bin = atob(b64);
      const bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      return undefined;
    }
  }
  return PRINTABLE.test(v) ? v : undefined;
}

function valueAt(args: unknown, path: readonly string[]): unknown {
  let v = args;
  for (const key of path) {
    if (!isObject(v)) return undefined;
    v = v[key];
  }
  return v;
}

/** Whether a decoded header value stands for `body` (integers numerically, `42.0` = `42`). */
function same(header: string, body: unknown, type: HeaderParam["type"]): boolean {
  if (typeof body === "string") return header === body;
  if (typeof body === "boolean") return header === String(body);
  if (typeof body === "number") {
    // Number() alone takes "0x2A" for 42, which a proxy routing on the header would not
    if (type !== "integer" || !DECIMAL.test(header)) return false;
    return Number(header) === body;
  }
  return false;
}

/** What disagrees between the headers and the body, or undefined when they agree. */
export type Mismatch = string | undefined;

/** The `Mcp-Name` source of a method: `params.name`, `params.uri` or `params.taskId`. */
export function nameField(method: string): "name" | "uri" | "taskId" | undefined {
  if (method === "tools/call" || method === "prompts/get") return "name";
  if (method === "resources/read") return "uri";
  // the tasks extension's methods; a removed one (tasks/result) must reach dispatch and get -32601
  if (method === "tasks/get" || method === "tasks/update" || method === "tasks/cancel") return "taskId";
  return undefined;
}

/**
 * Checks `Mcp-Method`, `Mcp-Name` and the tool's `Mcp-Param-*` headers against the body; the
 * message says which header is wrong and how.
 */
export function checkHeaders(
  get: (name: string) => string | null,
  method: string,
  params: { [key: string]: unknown },
  toolParams: readonly HeaderParam[],
): Mismatch {
  const m = get("mcp-method");
  if (m === null) return "the Mcp-Method header is required";
  if (m.trim() !== method)
    return `the Mcp-Method header ${JSON.stringify(m.trim())} does not match the method ${JSON.stringify(method)}`;
  const field = nameField(method);
  const bodyName = field === undefined ? undefined : params[field];
  if (typeof bodyName === "string") {
    const raw = get("mcp-name");
    if (raw === null) return `the Mcp-Name header is required for ${method}`;
    const name = decodeHeaderValue(raw);
    if (name !== bodyName) return `the Mcp-Name header does not match params.${field}`;
  }
  const args = params.arguments;
  for (const p of toolParams) {
    const value = valueAt(args, p.path);
    if (value === undefined || value === null) continue;
    const raw = get(p.header);
    if (raw === null)
      return `the Mcp-Param-${p.name} header is required when arguments.${p.path.join(".")} is given`;
    const decoded = decodeHeaderValue(raw);
    if (decoded === undefined)
      return `the Mcp-Param-${p.name} header is not a valid value (plain visible ASCII, or =?base64?…?=)`;
    if (!same(decoded, value, p.type))
      return `the Mcp-Param-${p.name} header does not match arguments.${p.path.join(".")}`;
  }
  return undefined;
}
