/**
 * Who a client is by its address: IP addresses read and written in one normal form, IPv6 grouped by
 * a prefix (a /64 is one host), and the client behind trusted proxies read from `X-Forwarded-For` or
 * RFC 7239 `Forwarded`, right to left. Pure: no I/O, nothing of Node.
 */

/** An address: IPv4 as one 32-bit number, IPv6 as eight 16-bit groups. */
type Ip = { readonly v4: number } | { readonly v6: readonly number[] };

/**
 * Which proxies in front of the server are trusted to say who the client is: a count of hops (every
 * connection comes through that many proxies), or the addresses of the proxies (`"10.0.0.0/8"`,
 * `"2001:db8::/32"`, `"192.0.2.7"`, or a name: `"loopback"`, `"private"`, `"linklocal"`); `header` is
 * the one header they write (default `x-forwarded-for`). Give it only with a proxy in front that
 * writes that header: without one, every client names itself.
 */
export type TrustProxy =
  | number
  | readonly string[]
  | { readonly hops: number; readonly header?: ForwardedHeader }
  | { readonly ranges: readonly string[]; readonly header?: ForwardedHeader };

/** The header trusted proxies append the address they saw to. */
export type ForwardedHeader = "x-forwarded-for" | "forwarded";

/** A dotted-quad IPv4 address as one 32-bit number, or undefined for anything else (no leading zeros). */
export function ipv4(s: string): number | undefined {
  const parts = s.split(".");
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    // a leading zero is refused: some readers take 010 for octal 8, and no proxy writes one
    if (p.length === 0 || p.length > 3 || !/^\d+$/.test(p) || (p.length > 1 && p[0] === "0"))
      return undefined;
    const v = Number(p);
    if (v > 255) return undefined;
    n = n * 256 + v;
  }
  return n;
}

/** The eight 16-bit groups of an IPv6 address (a zone id dropped, an IPv4 tail as two groups), or undefined. */
export function ipv6(s: string): number[] | undefined {
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  if (s.length === 0 || s.length > 45) return undefined;
  const halves = s.split("::");
  if (halves.length > 2) return undefined;
  const groups = (text: string): number[] | undefined => {
    if (text === "") return [];
    const out: number[] = [];
    const parts = text.split(":");
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (i === parts.length - 1 && p.includes(".")) {
        const v4 = ipv4(p);
        if (v4 === undefined) return undefined;
        out.push(v4 >>> 16, v4 & 0xffff);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(p)) out.push(Number.parseInt(p, 16));
      else return undefined;
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (head === undefined || tail === undefined) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const missing = 8 - head.length - tail.length;
  if (missing < 1) return undefined;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}

/** An address as a client or a proxy writes it: IPv4 or IPv6, bracketed or not, with a port or not. */
function parse(text: string): Ip | undefined {
  if (text.length > 64) return undefined;
  let host = text;
  if (host.startsWith("[")) {
    const end = host.indexOf("]");
    if (end < 0) return undefined;
    const rest = host.slice(end + 1);
    if (rest !== "" && !/^:\d{1,5}$/.test(rest)) return undefined;
    host = host.slice(1, end);
    const v6 = ipv6(host);
    return v6 && mapped(v6);
  }
  const colon = host.indexOf(":");
  if (colon >= 0 && colon === host.lastIndexOf(":")) {
    // IPv4 with a port (an IPv6 address has at least two colons)
    if (!/^\d{1,5}$/.test(host.slice(colon + 1))) return undefined;
    host = host.slice(0, colon);
  } else if (colon >= 0) {
    const v6 = ipv6(host);
    return v6 && mapped(v6);
  }
  const v4 = ipv4(host);
  return v4 === undefined ? undefined : { v4 };
}

/** An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) is the IPv4 address it maps. */
function mapped(g: number[]): Ip {
  const isMapped = g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff;
  return isMapped ? { v4: g[6]! * 65536 + g[7]! } : { v6: g };
}

function format(ip: Ip): string {
  if ("v4" in ip) {
    const n = ip.v4;
    return `${Math.floor(n / 16777216)}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
  }
  // RFC 5952: lower case, the longest run of two or more zero groups as `::`
  const g = ip.v6;
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (from: number, to: number) =>
    g
      .slice(from, to)
      .map((x) => x.toString(16))
      .join(":");
  return best < 0 ? hex(0, 8) : `${hex(0, best)}::${hex(best + bestLen, 8)}`;
}

/** The first `bits` of an IPv6 address, the rest zero. */
function masked(g: readonly number[], bits: number): number[] {
  return g.map((x, i) => {
    const keep = Math.max(0, Math.min(16, bits - 16 * i));
    return keep === 16 ? x : keep === 0 ? 0 : x & (0xffff << (16 - keep)) & 0xffff;
  });
}

/**
 * What a function of an address gives, remembered for the addresses asked of lately: a client's
 * requests ask again and again, and a crowd's addresses are each asked by their own. Forgets them
 * all once `max` are kept, so that a crowd costs it no more than that.
 */
export class AddressMemo<T> {
  readonly #of: (address: string) => T;
  readonly #max: number;
  #kept = new Map<string, T>();

  constructor(of: (address: string) => T, max = 4096) {
    this.#of = of;
    this.#max = max;
  }

  get(address: string): T {
    const kept = this.#kept.get(address);
    if (kept !== undefined || this.#kept.has(address)) return kept as T;
    const value = this.#of(address);
    if (this.#kept.size >= this.#max) this.#kept = new Map();
    this.#kept.set(address, value);
    return value;
  }
}

/**
 * An address in its normal form (`192.0.2.1`, `2001:db8::1`): brackets, a port and an IPv6 zone
 * dropped, IPv4-mapped IPv6 written as IPv4. Undefined when it is no IP address.
 */
export function normalAddress(address: string): string | undefined {
  const ip = parse(address);
  return ip && format(ip);
}

/**
 * The key a client's address is counted under: an IPv4 address itself, an IPv6 address's first
 * `ipv6Prefix` bits (default 64: one host, which is given a /64 to choose addresses from) written as
 * `2001:db8:1:2::/64`. Undefined when `address` is no IP address.
 */
export function addressKey(address: string | undefined, ipv6Prefix = 64): string | undefined {
  if (address === undefined) return undefined;
  const ip = parse(address);
  if (ip === undefined) return undefined;
  if ("v4" in ip || ipv6Prefix >= 128) return format(ip);
  return `${format({ v6: masked(ip.v6, ipv6Prefix) })}/${ipv6Prefix}`;
}

/** `ipv6Prefix` checked: an integer from 1 to 128. */
export function checkedPrefix(n: number | undefined): number {
  if (n === undefined) return 64;
  if (!Number.isInteger(n) || n < 1 || n > 128)
    throw new RangeError("ipv6Prefix must be an integer from 1 to 128");
  return n;
}

const NAMED: { readonly [name: string]: readonly string[] } = {
  loopback: ["127.0.0.0/8", "::1/128"],
  private: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"],
  linklocal: ["169.254.0.0/16", "fe80::/10"],
};

/** A range of addresses: an address and how many of its first bits every member shares. */
interface Range {
  readonly ip: Ip;
  readonly bits: number;
}

function range(text: string): Range[] {
  const named = NAMED[text];
  if (named) return named.flatMap(range);
  const slash = text.indexOf("/");
  const ip = parse(slash < 0 ? text : text.slice(0, slash));
  const max = ip && "v4" in ip ? 32 : 128;
  const suffix = slash < 0 ? undefined : text.slice(slash + 1);
  const bits = suffix === undefined ? max : /^\d{1,3}$/.test(suffix) ? Number(suffix) : -1;
  if (ip === undefined || bits < 0 || bits > max)
    throw new TypeError(
      `trustProxy: "${text}" is not an address, a range (10.0.0.0/8, fc00::/7) or loopback, private, linklocal`,
    );
  return [{ ip, bits }];
}

let local: readonly Range[] | undefined;

/** Whether `address` is a loopback or private one (where a proxy in front of the server would be). */
export function isLocalAddress(address: string): boolean {
  const ip = parse(address);
  local ??= ["loopback", "private"].flatMap(range);
  return ip !== undefined && local.some((r) => inRange(ip, r));
}

function inRange(ip: Ip, r: Range): boolean {
  if ("v4" in ip !== "v4" in r.ip) return false;
  if ("v4" in ip && "v4" in r.ip) {
    if (r.bits === 0) return true;
    const shift = 32 - r.bits;
    return Math.floor(ip.v4 / 2 ** shift) === Math.floor(r.ip.v4 / 2 ** shift);
  }
  const a = masked((ip as { v6: readonly number[] }).v6, r.bits);
  const b = masked((r.ip as { v6: readonly number[] }).v6, r.bits);
  return a.every((x, i) => x === b[i]);
}

/** The entries of `X-Forwarded-For`, left to right: each an address in normal form, or null (unknown, garbage). */
export function xForwardedFor(value: string): (string | null)[] {
  return value.split(",").map((e) => normalAddress(e.trim()) ?? null);
}

/** `tchar` of RFC 9110: what a token (a parameter's name, an unquoted value) is made of. */
const TCHAR = /[!#$%&'*+.^_`|~0-9A-Za-z-]/;

/**
 * The `for=` of each element of RFC 7239 `Forwarded`, left to right: an address in normal form, or
 * null (no `for`, `unknown`, an obfuscated `_name`). Undefined when the value breaks the grammar
 * anywhere (a quote never closed, a bad escape, a parameter twice in one element, a stray character):
 * where one element ends is then no longer known, so no element of it can be believed.
 */
export function forwardedFor(value: string): (string | null)[] | undefined {
  const out: (string | null)[] = [];
  const n = value.length;
  let i = 0;
  const ows = () => {
    while (i < n && (value[i] === " " || value[i] === "\t")) i++;
  };
  for (;;) {
    ows();
    if (i >= n) break;
    if (value[i] === ",") {
      i++; // an empty element (allowed by the list rule): no hop
      continue;
    }
    // forwarded-element = [ pair ] *( ";" [ pair ] ), pair = token "=" ( token / quoted-string )
    const names = new Set<string>();
    let found: string | null = null;
    for (;;) {
      ows();
      if (i < n && value[i] !== ";" && value[i] !== ",") {
        const from = i;
        while (i < n && TCHAR.test(value[i]!)) i++;
        if (i === from || value[i] !== "=") return undefined;
        const name = value.slice(from, i).toLowerCase();
        if (names.has(name)) return undefined;
        names.add(name);
        i++;
        let v = "";
        if (value[i] === '"') {
          i++;
          for (;;) {
            if (i >= n) return undefined;
            const c = value.charCodeAt(i);
            if (c === 0x22) break;
            if (c === 0x5c) {
              i++;
              const e = value.charCodeAt(i);
              if (!(e === 0x09 || (e >= 0x20 && e !== 0x7f))) return undefined;
              v += value[i];
            } else if (c === 0x09 || (c >= 0x20 && c !== 0x7f)) v += value[i];
            else return undefined;
            i++;
          }
          i++;
        } else {
          const from = i;
          while (i < n && TCHAR.test(value[i]!)) i++;
          if (i === from) return undefined;
          v = value.slice(from, i);
        }
        if (name === "for") found = normalAddress(v) ?? null;
        ows();
      }
      if (i >= n || value[i] === ",") break;
      if (value[i] !== ";") return undefined;
      i++;
    }
    out.push(found);
    if (i < n) i++; // the comma
  }
  return out;
}

/** Resolves the client of a request from its peer and the header its trusted proxies write. */
export class ProxyTrust {
  /** The header to read, in lower case. */
  readonly header: ForwardedHeader;
  readonly #hops: number | undefined;
  readonly #ranges: readonly Range[];

  constructor(trust: TrustProxy) {
    const o = typeof trust === "number" ? { hops: trust } : Array.isArray(trust) ? { ranges: trust } : trust;
    if (typeof o !== "object" || o === null)
      throw new TypeError("trustProxy must be a number of hops, or ranges");
    const { header = "x-forwarded-for" } = o as { header?: ForwardedHeader };
    if (header !== "x-forwarded-for" && header !== "forwarded")
      throw new TypeError('trustProxy.header must be "x-forwarded-for" or "forwarded"');
    this.header = header;
    if ("hops" in o) {
      if (!Number.isInteger(o.hops) || o.hops < 1)
        throw new RangeError("trustProxy hops must be a positive integer");
      this.#hops = o.hops;
      this.#ranges = [];
    } else {
      const ranges = (o as { ranges?: unknown }).ranges;
      if (!Array.isArray(ranges)) throw new TypeError("trustProxy must be a number of hops, or ranges");
      this.#ranges = (ranges as string[]).flatMap((r) => range(String(r)));
    }
  }

  /** Whether the hop at `depth` (0: the peer) with address `address` is a trusted proxy. */
  #trusted(address: string, depth: number): boolean {
    if (this.#hops !== undefined) return depth < this.#hops;
    const ip = parse(address);
    return ip !== undefined && this.#ranges.some((r) => inRange(ip, r));
  }

  /** Whether a connection from `peer` comes from a trusted proxy. */
  trusts(peer: string | undefined): boolean {
    return peer !== undefined && this.#trusted(peer, 0);
  }

  /**
   * The client's address: walking from the peer leftwards through the header's entries, the first
   * address that is not a trusted proxy. Entries left of it (whatever the client wrote itself) are
   * never read. Where an entry is not an address (`unknown`, `_hidden`, garbage), the address of
   * the trusted hop that wrote it; with every hop trusted, the leftmost. The peer itself when it is
   * not trusted or there is no header.
   */
  client(peer: string | undefined, value: string | null): string | undefined {
    const last = peer === undefined ? undefined : (normalAddress(peer) ?? peer);
    if (last === undefined || value === null || !this.#trusted(last, 0)) return last;
    const entries = this.header === "forwarded" ? forwardedFor(value) : xForwardedFor(value);
    // a Forwarded value whose quoting is broken: the client's part may have swallowed the proxy's
    if (entries === undefined) return last;
    let known = last;
    for (let i = entries.length - 1, depth = 1; i >= 0; i--, depth++) {
      const e = entries[i]!;
      if (e === null) return known;
      if (!this.#trusted(e, depth)) return e;
      known = e;
    }
    return known;
  }
}
