/**
 * JSON with comments and trailing commas (JSONC, which VS Code and others accept in their files): read as
 * JSON, and one member of an object set by editing the text in place, so every comment stays where it was.
 */

/** A value's place in the text; an object's members with theirs. */
interface Span {
  start: number;
  end: number;
  members?: Member[];
}

interface Member {
  key: string;
  keyStart: number;
  value: Span;
  /** The offset of the comma after the value, when there is one. */
  comma?: number;
}

/** A JSONC text that does not parse; the message says where. */
export class JsoncError extends Error {
  override name = "JsoncError";
}

/** The offset of the first character at or after `i` that is neither white space nor in a comment. */
function skip(text: string, i: number): number {
  for (;;) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (text.startsWith("//", i)) {
      const nl = text.indexOf("\n", i);
      i = nl < 0 ? text.length : nl + 1;
    } else if (text.startsWith("/*", i)) {
      const end = text.indexOf("*/", i + 2);
      if (end < 0) throw new JsoncError(`a comment at offset ${i} never ends`);
      i = end + 2;
    } else return i;
  }
}

/** The end (one past the closing quote) of the string starting at `i`. */
function stringEnd(text: string, i: number): number {
  let j = i + 1;
  while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
  if (j >= text.length) throw new JsoncError(`a string at offset ${i} never ends`);
  return j + 1;
}

/** The value at `i` (after white space and comments), with its span. */
function value(text: string, from: number): Span {
  const i = skip(text, from);
  const c = text[i];
  if (c === '"') return { start: i, end: stringEnd(text, i) };
  if (c === "{" || c === "[") {
    const close = c === "{" ? "}" : "]";
    const members: Member[] = [];
    let j = skip(text, i + 1);
    while (text[j] !== close) {
      let member: Member | undefined;
      if (c === "{") {
        if (text[j] !== '"') throw new JsoncError(`expected a key at offset ${j}`);
        const keyEnd = stringEnd(text, j);
        const key = JSON.parse(text.slice(j, keyEnd)) as string;
        const colon = skip(text, keyEnd);
        if (text[colon] !== ":") throw new JsoncError(`expected ":" at offset ${colon}`);
        member = { key, keyStart: j, value: value(text, colon + 1) };
        members.push(member);
        j = skip(text, member.value.end);
      } else j = skip(text, value(text, j).end);
      if (text[j] === ",") {
        if (member) member.comma = j;
        j = skip(text, j + 1);
      } else if (text[j] !== close) throw new JsoncError(`expected "," or "${close}" at offset ${j}`);
    }
    return { start: i, end: j + 1, ...(c === "{" ? { members } : {}) };
  }
  const m = /^(?:true|false|null|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i, i + 64));
  if (!m) throw new JsoncError(`unexpected ${c === undefined ? "end" : JSON.stringify(c)} at offset ${i}`);
  return { start: i, end: i + m[0].length };
}

/** The root object of `text`'s spans. */
function root(text: string): Span {
  const span = value(text, 0);
  if (skip(text, span.end) !== text.length)
    throw new JsoncError(`unexpected text at offset ${skip(text, span.end)}`);
  return span;
}

/** `text` as JSON: its comments gone, its trailing commas too (strings untouched). */
export function stripJsonc(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const next = skip(text, i);
    if (next > i) out += " ";
    i = next;
    if (i >= text.length) break;
    if (text[i] === '"') {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      i = end;
    } else if (text[i] === ",") {
      const after = skip(text, i + 1);
      if (text[after] !== "}" && text[after] !== "]") out += ",";
      i++;
    } else out += text[i++];
  }
  return out;
}

/** The offset after the comments that follow `offset` on its line (`offset` itself when there are none). */
function lineEnd(text: string, offset: number): number {
  let at = offset;
  for (;;) {
    let i = at;
    while (text[i] === " " || text[i] === "\t") i++;
    if (text.startsWith("//", i)) {
      const nl = text.indexOf("\n", i);
      // the line's end is before its CR, on a CRLF line
      return nl < 0 ? text.length : text[nl - 1] === "\r" ? nl - 1 : nl;
    }
    const end = text.startsWith("/*", i) ? text.indexOf("*/", i + 2) : -1;
    if (end < 0 || text.slice(i, end).includes("\n")) return at;
    at = end + 2;
  }
}

/** The white space that starts the line `offset` is on. */
function lineIndent(text: string, offset: number): string {
  const start = text.lastIndexOf("\n", offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))![0];
}

/**
 * `text` with the member `path` (keys from the root object down) set to `json`, everything else as it
 * was. Missing objects on the way are made; the value is written with `unit` as one level of indent, and
 * `eol` (the file's own, `\n` or `\r\n`) between its lines.
 */
export function setJsonc(
  text: string,
  path: readonly string[],
  json: unknown,
  unit: string,
  eol: "\n" | "\r\n" = "\n",
): string {
  let span = root(text);
  if (span.members === undefined) throw new JsoncError("the file does not hold an object");
  for (const [depth, key] of path.entries()) {
    const members: Member[] = span.members ?? [];
    const found = members.find((m) => m.key === key);
    const rest = path.slice(depth + 1);
    if (found && (rest.length === 0 || found.value.members !== undefined)) {
      if (rest.length > 0) {
        span = found.value;
        continue;
      }
      const indent = lineIndent(text, found.keyStart);
      const body = JSON.stringify(json, null, unit).replaceAll("\n", `${eol}${indent}`);
      return text.slice(0, found.value.start) + body + text.slice(found.value.end);
    }
    if (found) throw new JsoncError(`"${key}" is not an object`);
    // a new member, last, in the object's own style: after a trailing comma when it has one
    const nested = rest.reduceRight<unknown>((inner, k) => ({ [k]: inner }), json);
    const last = members.at(-1);
    const indent = last ? lineIndent(text, last.keyStart) : lineIndent(text, span.start) + unit;
    const member = `"${JSON.stringify(key).slice(1, -1)}": ${JSON.stringify(nested, null, unit).replaceAll("\n", `${eol}${indent}`)}`;
    if (!last) {
      const inside = text.slice(span.start + 1, span.end - 1);
      // an empty object opens on its own lines; one holding only comments keeps them after the member
      const after = inside.trim() === "" ? `${eol}${lineIndent(text, span.start)}` : inside;
      return `${text.slice(0, span.start + 1)}${eol}${indent}${member}${after}${text.slice(span.end - 1)}`;
    }
    // a comment on the last member's line stays with it
    if (last.comma !== undefined) {
      const at = lineEnd(text, last.comma + 1);
      return `${text.slice(0, at)}${eol}${indent}${member},${text.slice(at)}`;
    }
    const at = lineEnd(text, last.value.end);
    return `${text.slice(0, last.value.end)},${text.slice(last.value.end, at)}${eol}${indent}${member}${text.slice(at)}`;
  }
  throw new JsoncError("no member to set");
}
