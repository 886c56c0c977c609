/**
 * The request headers of the 2026-07-28 revision that mirror the body (`MCP-Protocol-Version`,
 * `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`), their `=?base64?…?=` form, and the check that they agree.
 */

import type { Features } from "../eras/versions.js";
import { ErrorCode } from "../errors.js";
import { encodeMessage, errorResponse } from "../jsonrpc.js";
import type { HeaderParam } from "../tools/headers.js";
import { isObject, type RequestId } from "../types.js";
import { Reply } from "./reply.js";
import { header } from "./request.js";

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

/** Whether a decoded header value stands for `body` (integers by exact value, `42.0` = `4.2e1` = `42`). */
function same(header: string, body: unknown, type: HeaderParam["type"]): boolean {
  if (typeof body === "string") return header === body;
  if (typeof body === "boolean") return header === String(body);
  if (typeof body === "number") {
    // Number() alone takes "0x2A" for 42, which a proxy routing on the header would not
    if (type !== "integer" || !Number.isInteger(body) || !DECIMAL.test(header)) return false;
    return exactInteger(header) === BigInt(body);
  }
  return false;
}

/**
 * The integer a JSON number's text (one {@link DECIMAL} accepts) denotes exactly, or undefined when
 * it is not one. Compared as binary64, `41.99999999999999999` would be 42: a proxy routing on the
 * header and the server reading the body would disagree about the same request. One pass over the
 * text, no regex: it is the client's, and a pattern like `/0+$/` is quadratic in a run of zeros.
 */
export function exactInteger(text: string): bigint | undefined {
  const sign = text.charCodeAt(0) === 0x2d ? 1 : 0;
  let end = digitsFrom(text, sign);
  let fraction = 0;
  if (text.charCodeAt(end) === 0x2e) {
    const after = digitsFrom(text, end + 1);
    fraction = after - end - 1;
    end = after;
  }
  // the mantissa's digits, the fraction's without its point
  const digits =
    fraction === 0
      ? text.slice(sign, end)
      : text.slice(sign, end - fraction - 1) + text.slice(end - fraction, end);
  let exp = end < text.length ? Number(text.slice(end + 1)) - fraction : -fraction;
  let first = 0;
  while (first < digits.length && digits.charCodeAt(first) === 0x30) first++;
  if (first === digits.length) return 0n;
  let last = digits.length;
  while (digits.charCodeAt(last - 1) === 0x30) last--;
  exp += digits.length - last;
  // a fraction left over, or more digits than any double's integer has (about 309)
  if (exp < 0 || last - first + exp > 400) return undefined;
  return BigInt((sign ? "-" : "") + digits.slice(first, last)) * 10n ** BigInt(exp);
}

/** The index of the first character at or after `i` that is not an ASCII digit. */
function digitsFrom(text: string, i: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) break;
    i++;
  }
  return i;
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
  return paramsMismatch(get, params.arguments, toolParams, true);
}

/** What disagrees between a tool's `Mcp-Param-*` headers and its arguments; `required`: a header left out disagrees too. */
function paramsMismatch(
  get: (name: string) => string | null,
  args: unknown,
  toolParams: readonly HeaderParam[],
  required: boolean,
): Mismatch {
  for (const p of toolParams) {
    const value = valueAt(args, p.path);
    if (value === undefined || value === null) continue;
    const raw = get(p.header);
    if (raw === null && !required) continue;
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

/**
 * The check for a request of the initialize era (2025): it need not mirror its body in `Mcp-Method`,
 * `Mcp-Name` and `Mcp-Param-*`, but the ones it sends must agree with it, since a gateway in front may
 * have routed on them. In a batch, every message must agree with them.
 */
export function checkSentHeaders(
  get: (name: string) => string | null,
  message: unknown,
  toolParams: (tool: string) => readonly HeaderParam[],
): Mismatch {
  const sentMethod = get("mcp-method")?.trim() ?? null;
  const sentName = get("mcp-name");
  for (const one of Array.isArray(message) ? message : [message]) {
    // what is no message gets its own answer from dispatch
    if (!isObject(one)) continue;
    const method = typeof one.method === "string" ? one.method : undefined;
    if (sentMethod !== null && sentMethod !== method) {
      const body =
        method === undefined ? "the body, which is no request" : `the method ${JSON.stringify(method)}`;
      return `the Mcp-Method header ${JSON.stringify(sentMethod)} does not match ${body}`;
    }
    if (method === undefined) continue;
    const params = isObject(one.params) ? one.params : {};
    const field = nameField(method);
    if (sentName !== null) {
      if (field === undefined) return `the Mcp-Name header is sent, but ${method} names nothing`;
      const bodyName = params[field];
      if (typeof bodyName !== "string" || decodeHeaderValue(sentName) !== bodyName)
        return `the Mcp-Name header does not match params.${field}`;
    }
    if (method === "tools/call" && typeof params.name === "string") {
      const why = paramsMismatch(get, params.arguments, toolParams(params.name), false);
      if (why !== undefined) return why;
    }
  }
  return undefined;
}

/**
 * The 400 `-32020` for a request of the initialize era whose mirrored headers contradict its body (see
 * {@link checkSentHeaders}), or undefined when they agree.
 */
export function contradictingHeaders(
  request: Request,
  message: unknown,
  server: { toolHeaders(tool: string): readonly HeaderParam[] },
  features: Features,
): Reply | undefined {
  const why = checkSentHeaders(
    (name) => header(request, name),
    message,
    (tool) => server.toolHeaders(tool),
  );
  return why === undefined ? undefined : headerMismatch(why, message, features);
}

/** The 400 `-32020` for a request whose headers contradict its body, as its revision spells an error. */
function headerMismatch(why: string, message: unknown, features: Features): Reply {
  // the answer of a request names it; a response or a batch is answered by no one's id
  const id =
    isObject(message) &&
    typeof message.method === "string" &&
    (typeof message.id === "string" || typeof message.id === "number");
  const error = { code: ErrorCode.HeaderMismatch, message: `Header mismatch: ${why}` };
  const body = errorResponse(id ? (message.id as RequestId) : undefined, error, features);
  return new Reply(400, { "content-type": "application/json" }, encodeMessage(body));
}
