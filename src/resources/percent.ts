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

/** What simple expansion writes as it is: the unreserved characters. */
export const KEEP_UNRESERVED = charTable(UNRESERVED);
/** What `{+…}` and `{#…}` write as they are: unreserved and reserved. */
export const KEEP_RESERVED = charTable(UNRESERVED + RESERVED);

const HEX = "0123456789ABCDEF";

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

/** True when `s[i]` starts a `%XX` escape. */
export function isTriplet(s: string, i: number): boolean {
  return s.charCodeAt(i) === 37 && isHex(s.charCodeAt(i + 1)) && isHex(s.charCodeAt(i + 2));
}

/**
 * Percent-encodes every character `keep` does not list (as UTF-8); with `triplets`, a `%XX` already in
 * `s` is passed through (RFC 6570 reserved expansion), otherwise `%` is always encoded. Throws
 * `TypeError` naming `name` for a lone surrogate.
 */
export function percentEncode(s: string, keep: Uint8Array, name: string, triplets = false): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 128 && keep[c]) continue;
    if (triplets && isTriplet(s, i)) {
      i += 2;
      continue;
    }
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

/** What a URI may hold as it is: unreserved, reserved and `%`. */
const URI_TEXT = charTable(UNRESERVED + RESERVED + "%");

/**
 * `s` with every character a URI cannot hold (non-ASCII, space, controls, `"<>\^\`{|}`) percent-encoded as
 * UTF-8, and `%` left as it is; `s` itself when there is none; null for a lone surrogate. Encoding an IRI
 * this way changes no decoded value, so a URI written with `é` matches a literal written `%C3%A9`.
 */
export function encodeUriText(s: string): string | null {
  let i = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c >= 128 || !URI_TEXT[c]) break;
    i++;
  }
  if (i === s.length) return s;
  try {
    return percentEncode(s, URI_TEXT, "", true);
  } catch {
    return null;
  }
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

/** How many code points `s` has. */
export function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xdc00 || c > 0xdfff || i === 0 || s.charCodeAt(i - 1) < 0xd800 || s.charCodeAt(i - 1) > 0xdbff)
      n++;
  }
  return n;
}
