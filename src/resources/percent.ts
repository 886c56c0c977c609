/**
 * Percent-encoding for URI templates: which ASCII characters a value may keep as they are, encoding
 * everything else, and decoding exactly once. A leaf: it knows nothing of templates.
 */
import { ErrorCode, McpError } from "../errors.js";

/** A 128-entry table with 1 at the char code of each character of `chars`. */
export function charTable(chars: string): Uint8Array {
  const t = new Uint8Array(128);
  for (let i = 0; i < chars.length; i++) t[chars.charCodeAt(i)] = 1;
  return t;
}
const UNRESERVED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";
const RESERVED = ":/?#[]@!$&'()*+,;=";

/** Shared by every template: there are only a few distinct tables. */
const keepTables = new Map<string, Uint8Array>();

/** The characters written as they are: unreserved (and reserved for `{+…}`/`{#…}`), minus `extra`. */
export function keepTable(reserved: boolean, extra: string): Uint8Array {
  const key = (reserved ? "+" : "-") + extra;
  let t = keepTables.get(key);
  if (t === undefined) {
    t = charTable(reserved ? UNRESERVED + RESERVED : UNRESERVED);
    for (let i = 0; i < extra.length; i++) t[extra.charCodeAt(i)] = 0;
    if (keepTables.size < 1000) keepTables.set(key, t);
  }
  return t;
}

const HEX = "0123456789ABCDEF";

/** Percent-encodes every character `keep` does not list; `%` is never in `keep`. */
export function percentEncode(s: string, keep: Uint8Array, name: string): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 128 && keep[c]) continue;
    out += s.slice(from, i);
    if (c < 128) out += "%" + HEX[c >> 4] + HEX[c & 15];
    else {
      const wide = c >= 0xd800 && c <= 0xdbff && i + 1 < s.length;
      try {
        out += encodeURIComponent(s.slice(i, wide ? i + 2 : i + 1));
      } catch {
        throw new TypeError(`expand: the value of '${name}' is not well-formed Unicode (a lone surrogate)`);
      }
      if (wide) i++;
    }
    from = i + 1;
  }
  return from === 0 ? s : out + s.slice(from);
}

/** Decodes once; a malformed escape is the client's error, reported as invalid params. */
export function percentDecode(raw: string, uri: string): string {
  if (!raw.includes("%")) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    const shown = uri.length > 200 ? uri.slice(0, 200) + "…" : uri;
    const bad = /%(?![0-9A-Fa-f]{2})/.exec(raw);
    const why = bad
      ? `"${raw.slice(bad.index, bad.index + 3)}" is not a %XX escape`
      : "its escapes are not valid UTF-8";
    throw new McpError(ErrorCode.InvalidParams, `Malformed percent-encoding in URI ${shown}: ${why}`, {
      uri,
    });
  }
}
