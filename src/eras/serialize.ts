/**
 * Per-revision serialization, in one place: handlers build the newest shapes, and these functions
 * take out whatever the client's negotiated revision lacks. Each returns its input untouched when
 * nothing has to go, so the newest revision pays no copy.
 */
import type {
  Annotations,
  CallToolResult,
  ContentBlock,
  Implementation,
  PromptMessage,
  ResourceContents,
} from "../types.js";
import type { Features } from "./versions.js";

type Obj = { [key: string]: unknown };

function without(obj: Obj, drop: readonly string[]): Obj {
  const out: Obj = {};
  for (const key in obj) if (!drop.includes(key)) out[key] = obj[key];
  return out;
}

function shapeAnnotations(a: Annotations, f: Features): Annotations {
  return f.lastModified || a.lastModified === undefined
    ? a
    : (without(a as Obj, ["lastModified"]) as Annotations);
}

/** Drops the fields of a listed primitive (tool, resource, template, prompt) that `f` lacks. */
export function shapePrimitive<T extends object>(item: T, f: Features): T {
  const o = item as Obj;
  const drop: string[] = [];
  if (!f.title && "title" in o) drop.push("title");
  if (!f.icons && "icons" in o) drop.push("icons");
  if (!f.primitiveMeta && "_meta" in o) drop.push("_meta");
  if ("inputSchema" in o) {
    if (!f.toolAnnotations && "annotations" in o) drop.push("annotations");
    if ("outputSchema" in o && (!f.structuredOutput || (!f.stateless && !isObjectSchema(o.outputSchema))))
      drop.push("outputSchema");
    if ("execution" in o && !f.sessionTasks) drop.push("execution");
  }
  let out = drop.length ? without(o, drop) : o;
  const ann = out.annotations as Annotations | undefined;
  if (ann && !("inputSchema" in o) && !f.lastModified && ann.lastModified !== undefined) {
    out = out === o ? { ...o } : out;
    out.annotations = shapeAnnotations(ann, f);
  }
  const args = out.arguments as Obj[] | undefined;
  if (!f.title && Array.isArray(args) && args.some((a) => "title" in a)) {
    out = out === o ? { ...o } : out;
    out.arguments = args.map((a) => without(a, ["title"]));
  }
  return out as T;
}

function isObjectSchema(schema: unknown): boolean {
  return typeof schema === "object" && schema !== null && (schema as Obj).type === "object";
}

/** The server's `Implementation` for the initialize result. */
export function shapeImplementation(info: Implementation, f: Features): Implementation {
  const drop: string[] = [];
  if (!f.title && info.title !== undefined) drop.push("title");
  if (!f.implementationDetails) {
    for (const key of ["description", "icons", "websiteUrl"] as const)
      if (info[key] !== undefined) drop.push(key);
  }
  return drop.length ? (without(info as unknown as Obj, drop) as unknown as Implementation) : info;
}

/**
 * One content block as `f` can carry it. A type the revision lacks becomes a text block that says
 * what it was, so the client still learns of it (audio before 2025-03-26, resource links before
 * 2025-06-18).
 */
export function shapeContent(block: ContentBlock, f: Features): ContentBlock {
  if (block.type === "audio" && !f.audio) {
    return {
      type: "text",
      text: `[audio content (${block.mimeType}) not shown: this protocol revision has no audio]`,
    };
  }
  if (block.type === "resource_link" && !f.resourceLink) {
    const label = block.title ?? block.name;
    return {
      type: "text",
      text: label === block.uri ? `Resource: ${block.uri}` : `Resource "${label}": ${block.uri}`,
    };
  }
  let out = block as unknown as Obj;
  if (!f.primitiveMeta && "_meta" in out) out = without(out, ["_meta"]);
  if (!f.title && block.type === "resource_link" && "title" in out) out = without(out, ["title"]);
  if (!f.icons && block.type === "resource_link" && "icons" in out) out = without(out, ["icons"]);
  const ann = out.annotations as Annotations | undefined;
  if (ann && !f.lastModified && ann.lastModified !== undefined) {
    out = out === (block as unknown) ? { ...out } : out;
    out.annotations = shapeAnnotations(ann, f);
  }
  if (block.type === "resource" && !f.primitiveMeta && "_meta" in block.resource) {
    out = out === (block as unknown) ? { ...out } : out;
    out.resource = without(block.resource as unknown as Obj, ["_meta"]);
  }
  return out as unknown as ContentBlock;
}

function shapeBlocks(blocks: ContentBlock[], f: Features): ContentBlock[] {
  let out: ContentBlock[] | undefined;
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i]!;
    const s = shapeContent(b, f);
    if (s !== b) {
      out ??= blocks.slice();
      out[i] = s;
    }
  }
  return out ?? blocks;
}

/** A `tools/call` result as `f` can carry it. */
export function shapeCallToolResult(result: CallToolResult, f: Features): CallToolResult {
  const content = shapeBlocks(result.content, f);
  const sc = result.structuredContent;
  const dropStructured =
    sc !== undefined &&
    (!f.structuredOutput || (!f.stateless && (typeof sc !== "object" || sc === null || Array.isArray(sc))));
  if (content === result.content && !dropStructured) return result;
  const out: CallToolResult = { ...result, content };
  if (dropStructured) delete out.structuredContent;
  return out;
}

/** The contents of a `resources/read` as `f` can carry them: `_meta` on a content arrives in 2025-06-18. */
export function shapeResourceContents(contents: ResourceContents[], f: Features): ResourceContents[] {
  if (f.primitiveMeta || !contents.some((c) => "_meta" in c)) return contents;
  return contents.map((c) =>
    "_meta" in c ? (without(c as unknown as Obj, ["_meta"]) as unknown as ResourceContents) : c,
  );
}

/** Prompt messages as `f` can carry them. */
export function shapeMessages(messages: PromptMessage[], f: Features): PromptMessage[] {
  let out: PromptMessage[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const content = shapeContent(m.content, f);
    if (content !== m.content) {
      out ??= messages.slice();
      out[i] = { role: m.role, content };
    }
  }
  return out ?? messages;
}

/** A registered primitive's listing, with its per-revision shapes cached. */
export interface Listed {
  readonly listing: object;
  readonly shaped: Map<string, object>;
}

/** The listing of `entry` as `f` can carry it; shaped once per revision, then served from the cache. */
export function listingFor(entry: Listed, f: Features): object {
  let s = entry.shaped.get(f.version);
  if (s === undefined) {
    s = shapePrimitive(entry.listing, f);
    entry.shaped.set(f.version, s);
  }
  return s;
}
