/**
 * Which IP addresses a server-side fetch must not reach: an address literal's class (loopback,
 * private, link-local, …), or undefined for a public unicast address. Pure: no lookups, no sockets.
 */
import { ipv6, ipv4 as parseIpv4 } from "../http/client-address.js";

/** The classes of address a Client ID Metadata Document is never fetched from unless allowed. */
export type AddressKind =
  | "loopback"
  | "private"
  | "link-local"
  | "shared"
  | "unique-local"
  | "multicast"
  | "unspecified"
  | "broadcast"
  | "documentation"
  | "reserved";

/** The four bytes of a dotted-quad IPv4 address, or undefined for anything else. */
function ipv4(text: string): number[] | undefined {
  const n = parseIpv4(text);
  return n === undefined ? undefined : [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
}

function kindOfIpv4([a, b, c, d]: number[]): AddressKind | undefined {
  if (a === undefined || b === undefined || c === undefined || d === undefined) return "reserved";
  if (a === 0) return "unspecified"; // 0.0.0.0/8, "this network"
  if (a === 10) return "private";
  if (a === 127) return "loopback";
  if (a === 169 && b === 254) return "link-local"; // cloud metadata endpoints live here
  if (a === 172 && b >= 16 && b <= 31) return "private";
  if (a === 192 && b === 168) return "private";
  if (a === 100 && b >= 64 && b <= 127) return "shared"; // carrier-grade NAT, 100.64.0.0/10
  if (a === 192 && b === 0 && c === 0) return "reserved"; // IETF protocol assignments
  if (a === 192 && b === 0 && c === 2) return "documentation";
  if (a === 198 && b === 51 && c === 100) return "documentation";
  if (a === 203 && b === 0 && c === 113) return "documentation";
  if (a === 198 && (b === 18 || b === 19)) return "reserved"; // benchmarking
  if (a === 192 && b === 88 && c === 99) return "reserved"; // 6to4 relay anycast
  if (a >= 224 && a <= 239) return "multicast";
  if (a === 255 && b === 255 && c === 255 && d === 255) return "broadcast";
  if (a >= 240) return "reserved";
  return undefined;
}

function kindOfIpv6(w: number[]): AddressKind | undefined {
  const v4 = (hi: number, lo: number) => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff];
  const zeroUpTo = (n: number) => w.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(8)) return "unspecified";
  if (zeroUpTo(7) && w[7] === 1) return "loopback";
  // v4-mapped (::ffff:a.b.c.d) reaches the IPv4 address itself; NAT64's well-known prefix translates to it
  if (zeroUpTo(5) && w[5] === 0xffff) return kindOfIpv4(v4(w[6]!, w[7]!));
  if (w[0] === 0x64 && w[1] === 0xff9b && w.slice(2, 6).every((x) => x === 0))
    return kindOfIpv4(v4(w[6]!, w[7]!));
  // v4-compatible (::a.b.c.d) is deprecated and routes nowhere public
  if (zeroUpTo(6)) return "reserved";
  // 6to4 carries an IPv4 address in its second and third groups
  if (w[0] === 0x2002) return kindOfIpv4(v4(w[1]!, w[2]!));
  const first = w[0]!;
  if ((first & 0xfe00) === 0xfc00) return "unique-local"; // fc00::/7
  if ((first & 0xffc0) === 0xfe80) return "link-local"; // fe80::/10
  if ((first & 0xffc0) === 0xfec0) return "private"; // fec0::/10, the old site-local
  if ((first & 0xff00) === 0xff00) return "multicast";
  if (first === 0x2001 && w[1] === 0x0db8) return "documentation";
  if (first === 0x3fff && w[1]! < 0x1000) return "documentation"; // 3fff::/20
  if (first === 0x2001 && w[1]! < 0x200) return "reserved"; // 2001::/23: Teredo, benchmarking, ORCHID
  // global unicast is 2000::/3; everything else is unassigned or special
  if ((first & 0xe000) !== 0x2000) return "reserved";
  return undefined;
}

/** Whether `text` is an IP address literal (IPv4 dotted quad, or IPv6 without brackets). */
export function isIpAddress(text: string): boolean {
  return ipv4(text) !== undefined || ipv6(text) !== undefined;
}

/**
 * The class of an IP address that a server-side fetch must not reach, or undefined for a public
 * unicast one. An IPv6 address that carries an IPv4 one (v4-mapped, NAT64, 6to4) has that one's class.
 * Something that is not an address at all is "reserved".
 */
export function addressKind(address: string): AddressKind | undefined {
  const text = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  const four = ipv4(text);
  if (four) return kindOfIpv4(four);
  const six = ipv6(text);
  if (six) return kindOfIpv6(six);
  return "reserved";
}
