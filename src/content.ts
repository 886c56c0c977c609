/** Turning what handlers return into wire contents and content blocks; `link()`. */
import { toBase64 } from "./bytes.js";
import {
  type CallToolResult,
  type ContentBlock,
  type GetPromptResult,
  isPromiseLike,
  type PromptMessage,
  type ResourceContents,
  type ResourceDetails,
  type ResourceLink,
} from "./types.js";

/** Options of {@link link}. */
export type LinkOptions = ResourceDetails;

/**
 * A `resource_link` content block: a tool points the model at a resource instead of embedding it.
 * @example run: async () => link("reports://2026-q3", "Q3 report", { mimeType: "application/pdf" }),
 */
export function link(uri: string, name: string, options: LinkOptions = {}): ResourceLink {
  return { type: "resource_link", uri, name, ...options };
}

function isObject(v: unknown): v is { [key: string]: unknown } {
  return typeof v === "object" && v !== null;
}

function isContents(v: unknown): v is ResourceContents {
  return (
    isObject(v) && typeof v.uri === "string" && (typeof v.text === "string" || typeof v.blob === "string")
  );
}

/** A value's type as an error names it: "undefined", "a bigint", "a Map", "a User (a class instance)". */
export function typeName(v: unknown): string {
  if (v === undefined || v === null) return String(v);
  if (typeof v === "number") return Number.isNaN(v) ? "NaN" : String(v);
  if (typeof v !== "object") return `a ${typeof v}`;
  if (Array.isArray(v)) return "an array";
  const proto = Object.getPrototypeOf(v);
  if (proto === null || proto === Object.prototype) return "an object";
  const name = (proto.constructor as { name?: unknown } | undefined)?.name;
  if (typeof name !== "string" || name === "") return "a class instance";
  return `${/^[AEIO]/.test(name) ? "an" : "a"} ${name}`;
}

const isBinary = (v: object): v is ArrayBuffer | ArrayBufferView =>
  ArrayBuffer.isView(v) ||
  v instanceof ArrayBuffer ||
  (typeof SharedArrayBuffer === "function" && v instanceof SharedArrayBuffer);

const isBlob = (v: object): v is Blob => typeof Blob === "function" && v instanceof Blob;

/** The bytes an ArrayBuffer or any view of one (typed array, DataView, Buffer) holds. */
function bytesOf(v: ArrayBuffer | ArrayBufferView): Uint8Array {
  if (v instanceof Uint8Array) return v;
  return ArrayBuffer.isView(v)
    ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength)
    : new Uint8Array(v as ArrayBuffer);
}

/** What to write instead of a value JSON cannot hold faithfully. */
function fixFor(v: unknown): string {
  if (typeof v === "bigint") return "return String(n) or Number(n) in its place";
  if (typeof v === "number") return "return null or a string in its place";
  if (typeof v === "function") return "call it, or leave it out";
  if (typeof v === "symbol") return "return its description, or leave it out";
  if (v instanceof Map) return "return Object.fromEntries(map) (string keys) or [...map] (its entries)";
  if (v instanceof Set) return "return [...set]";
  if (isPromiseLike(v)) return "await it first";
  if (typeof v === "object" && v !== null && (isBinary(v) || isBlob(v)))
    return "bytes are sent alone (a blob) or encoded into the value (base64)";
  if (v instanceof Error) return "throw it to fail, or return its message";
  return "it has no own enumerable field and no toJSON(), so its JSON would be {}: give its class a toJSON() method, or return a plain object";
}

/**
 * Where `value` holds something JSON.stringify would turn into `{}` in silence (a Map, a Set, a Blob,
 * an object with no own enumerable properties) or throw on (a bigint, a cycle): that place (`$.tags`)
 * and its type, or undefined when the JSON is faithful. Nested `undefined`, functions and symbols are
 * left out of objects and null in arrays, and a nested NaN or Infinity is null, as JSON has them.
 */
function unfaithful(
  value: unknown,
  path: string,
  key: string,
  seen: Set<object>,
): { path: string; value: unknown } | undefined {
  let v = value;
  // bytes first: a Buffer's toJSON would make them {"type":"Buffer","data":[…]}
  if (typeof v === "object" && v !== null && (isBinary(v) || isBlob(v))) return { path, value: v };
  if ((typeof v === "object" && v !== null) || typeof v === "bigint") {
    const toJSON = (v as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") v = toJSON.call(v, key);
  }
  if (typeof v === "bigint") return { path, value: v };
  if (typeof v !== "object" || v === null) return undefined;
  if (seen.has(v)) return { path, value: "a circular reference" };
  seen.add(v);
  try {
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const bad = unfaithful(v[i], `${path}[${i}]`, String(i), seen);
        if (bad) return bad;
      }
      return undefined;
    }
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) {
      if (v instanceof String || v instanceof Number || v instanceof Boolean) return undefined;
      if (v instanceof Map || v instanceof Set || v instanceof WeakMap || v instanceof WeakSet)
        return { path, value: v };
      if (isPromiseLike(v)) return { path, value: v };
      // a class instance: its own fields, as a data class; with none, its JSON would be {}
      if (Object.keys(v).length === 0) return { path, value: v };
    }
    for (const k of Object.keys(v)) {
      const bad = unfaithful((v as { [key: string]: unknown })[k], `${path}.${k}`, k, seen);
      if (bad) return bad;
    }
    return undefined;
  } finally {
    seen.delete(v);
  }
}

/** The error for a value with no faithful JSON form, or for a top-level value that is not a result. */
function refused(what: string, value: unknown, path = "$"): TypeError {
  const place = path === "$" ? "" : ` whose ${path} is`;
  const type = value === "a circular reference" ? value : typeName(value);
  const tail =
    value === undefined && path === "$"
      ? "did it forget to return?"
      : value === "a circular reference"
        ? "JSON cannot hold a cycle: return a copy without it"
        : `it has no faithful JSON form: ${fixFor(value)}`;
  return new TypeError(`${what} returned${place ? " a value" : ""}${place} ${type}; ${tail}`);
}

/**
 * JSON text that may hide a value serialized in silence (`{}`, a typed array's `{"0":…`, a Buffer's
 * `{"type":"Buffer","data":[…`), which then gets the full walk; any other JSON is sent as it is. Not
 * `null`: nullable fields are common, and walking every value that has one would cost more than
 * serializing it; a nested NaN stays JSON's `null`.
 */
const SUSPECT = /\{\}|\{"0":|\{"type":"Buffer","data":\[/;

/**
 * `value` as JSON text, or an error naming its producer (`verb` and `name`: "read() of" a URI, "run() of
 * tool" a name, joined only for an error) and the value that JSON cannot hold.
 */
function toJson(value: unknown, verb: string, name: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (e) {
    const bad = unfaithful(value, "$", "", new Set());
    if (bad) throw refused(`${verb} ${name}`, bad.value, bad.path);
    throw new TypeError(
      `${verb} ${name} returned a value that cannot be serialized as JSON: ${(e as Error).message}`,
    );
  }
  if (text === undefined || (typeof value === "number" && !Number.isFinite(value)))
    throw refused(`${verb} ${name}`, value);
  if (SUSPECT.test(text)) {
    const bad = unfaithful(value, "$", "", new Set());
    if (bad) throw refused(`${verb} ${name}`, bad.value, bad.path);
  }
  return text;
}

/**
 * SDK v1's result shape, `{ contents: [...] }` (and maybe `_meta`), from a read written for it: only when
 * the array is not empty and every item is `{ uri, text }` or `{ uri, blob }`. Anything else
 * (`{ contents: [] }`, `{ contents: ["Intro", "Ch 1"] }`) is a value like any other, sent as its JSON.
 */
function v1Contents(value: { [key: string]: unknown }): ResourceContents[] | undefined {
  const contents = value.contents;
  if (!Array.isArray(contents) || contents.length === 0 || !contents.every(isContents)) return undefined;
  for (const key in value) if (key !== "contents" && key !== "_meta") return undefined;
  return contents;
}

/**
 * What `read` returned → resource contents, or an error naming `uri` and the value's type:
 * string → text (`mimeType` or text/plain); bytes (Uint8Array, ArrayBuffer, any typed array or
 * DataView) → base64 blob (`mimeType` or application/octet-stream); a Blob → its bytes (`mimeType`,
 * its type, or application/octet-stream), asynchronously; an array of `{ uri, text }`/`{ uri, blob }`,
 * or SDK v1's `{ contents: [...] }` of such items → those contents; any other value JSON holds faithfully → its
 * JSON (`mimeType` or application/json). Refused: undefined, functions, symbols, bigints, NaN,
 * Infinity, Map, Set, class instances with no own fields and no `toJSON`, and (but NaN, Infinity)
 * such values nested.
 */
export function toResourceContents(
  value: unknown,
  uri: string,
  mimeType: string | undefined,
): ResourceContents[] | Promise<ResourceContents[]> {
  if (typeof value === "string") return [{ uri, mimeType: mimeType ?? "text/plain", text: value }];
  if (typeof value === "object" && value !== null) {
    if (Array.isArray(value)) {
      if (value.length > 0 && value.every(isContents)) return value;
    } else {
      const proto = Object.getPrototypeOf(value);
      if (proto === Object.prototype || proto === null) {
        if ("contents" in value) {
          const contents = v1Contents(value as { [key: string]: unknown });
          if (contents) return contents;
        }
      } else if (isBinary(value))
        return [{ uri, mimeType: mimeType ?? "application/octet-stream", blob: toBase64(bytesOf(value)) }];
      else if (isBlob(value))
        return value.arrayBuffer().then((b) => [
          {
            uri,
            mimeType: mimeType ?? (value.type || "application/octet-stream"),
            blob: toBase64(new Uint8Array(b)),
          },
        ]);
    }
  }
  return [{ uri, mimeType: mimeType ?? "application/json", text: toJson(value, "read() of", uri) }];
}

const BLOCK_TYPES = new Set(["text", "image", "audio", "resource_link", "resource"]);

/** Whether a value has the shape of a content block. */
export function isContentBlock(v: unknown): v is ContentBlock {
  if (!isObject(v) || typeof v.type !== "string" || !BLOCK_TYPES.has(v.type)) return false;
  switch (v.type) {
    case "text":
      return typeof v.text === "string";
    case "image":
    case "audio":
      return typeof v.data === "string" && typeof v.mimeType === "string";
    case "resource_link":
      return typeof v.uri === "string" && typeof v.name === "string";
    default:
      return isContents(v.resource);
  }
}

/**
 * What `run` returned → a `tools/call` result: a string, one content block, an array of blocks,
 * a whole result (`{ content, … }`), or nothing. Other values become their JSON as text, refused as
 * `read`'s are (see {@link toResourceContents}), and bytes are refused: a tool sends them in a block.
 */
export function toCallToolResult(value: unknown, name: string): CallToolResult {
  if (typeof value === "string") return { content: [{ type: "text", text: value }] };
  if (value === undefined || value === null) return { content: [] };
  if (isContentBlock(value)) return { content: [value] };
  if (Array.isArray(value) && value.every(isContentBlock)) return { content: value };
  return wholeToolResult(value, name);
}

/**
 * The rest of {@link toCallToolResult}, apart so that it stays small enough for V8 to inline where a
 * tool is called (the whole function was not, and a stdio echo cost 1.8% more instructions).
 */
function wholeToolResult(value: unknown, name: string): CallToolResult {
  if (isObject(value)) {
    if (Array.isArray(value.content)) {
      const i = value.content.findIndex((b) => !isContentBlock(b));
      if (i >= 0)
        throw new TypeError(
          `run() of tool ${name} returned a result whose content[${i}] is not a content block ({ type: "text", text }, image, audio, resource_link or resource)`,
        );
      return value as unknown as CallToolResult;
    }
    if (isBinary(value) || isBlob(value))
      throw new TypeError(
        `run() of tool ${name} returned ${typeName(value)}; a tool's result is content blocks: return bytes as { type: "image" (or "audio"), data: <base64>, mimeType }, or as an embedded resource`,
      );
  }
  return { content: [{ type: "text", text: toJson(value, "run() of tool", name) }] };
}

/**
 * What `get` returned → a prompt result: a string (one user message), one content block, a
 * message, an array of messages, strings or blocks, or a whole result (`{ messages, … }`).
 */
export function toPromptResult(value: unknown, description: string | undefined): GetPromptResult {
  let messages: PromptMessage[];
  if (isObject(value) && !Array.isArray(value) && Array.isArray(value.messages)) {
    const result = value as unknown as GetPromptResult;
    messages = result.messages.map(toMessage);
    const out: GetPromptResult = { ...result, messages };
    if (out.description === undefined && description !== undefined) out.description = description;
    return out;
  }
  messages = Array.isArray(value) ? value.map(toMessage) : [toMessage(value)];
  return description === undefined ? { messages } : { description, messages };
}

function toMessage(v: unknown): PromptMessage {
  if (typeof v === "string") return { role: "user", content: { type: "text", text: v } };
  if (isContentBlock(v)) return { role: "user", content: v };
  if (isObject(v) && (v.role === "user" || v.role === "assistant") && isContentBlock(v.content)) {
    return { role: v.role, content: v.content };
  }
  throw new TypeError("get() returned something that is not a prompt message, a content block or a string");
}
