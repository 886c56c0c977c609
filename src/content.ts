/** Turning what handlers return into wire contents and content blocks; `link()`. */
import { toBase64 } from "./bytes.js";
import type {
  CallToolResult,
  ContentBlock,
  GetPromptResult,
  PromptMessage,
  ResourceContents,
  ResourceDetails,
  ResourceLink,
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

function toJson(value: unknown, what: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (e) {
    throw new TypeError(
      `${what} returned a value that cannot be serialized as JSON: ${(e as Error).message}`,
    );
  }
  if (text === undefined) throw new TypeError(`${what} returned ${typeof value}, which has no JSON form`);
  return text;
}

/**
 * What `read` returned → resource contents:
 * string → text (`mimeType` or text/plain); Uint8Array/ArrayBuffer → base64 blob (`mimeType` or
 * application/octet-stream); an array of `{ uri, text }`/`{ uri, blob }` → as is; anything else →
 * its JSON (`mimeType` or application/json).
 */
export function toResourceContents(
  value: unknown,
  uri: string,
  mimeType: string | undefined,
): ResourceContents[] {
  if (typeof value === "string") return [{ uri, mimeType: mimeType ?? "text/plain", text: value }];
  if (value instanceof Uint8Array || value instanceof ArrayBuffer) {
    const bytes = value instanceof Uint8Array ? value : new Uint8Array(value);
    return [{ uri, mimeType: mimeType ?? "application/octet-stream", blob: toBase64(bytes) }];
  }
  if (Array.isArray(value) && value.length > 0 && value.every(isContents)) return value;
  return [{ uri, mimeType: mimeType ?? "application/json", text: toJson(value, "read()") }];
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
 * a whole result (`{ content, … }`), or nothing. Other values become their JSON as text.
 */
export function toCallToolResult(value: unknown): CallToolResult {
  if (typeof value === "string") return { content: [{ type: "text", text: value }] };
  if (value === undefined || value === null) return { content: [] };
  if (isContentBlock(value)) return { content: [value] };
  if (Array.isArray(value) && value.every(isContentBlock)) return { content: value };
  if (isObject(value) && Array.isArray(value.content)) {
    if (!value.content.every(isContentBlock))
      throw new TypeError("run() returned a result with an invalid content block");
    return value as unknown as CallToolResult;
  }
  if (typeof value === "function" || typeof value === "symbol") {
    throw new TypeError(`run() returned a ${typeof value}, which is not a tool result`);
  }
  return { content: [{ type: "text", text: toJson(value, "run()") }] };
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
