// Who a client is by its address: normal forms, IPv6 grouped by a prefix, and the client behind
// trusted proxies read right to left from X-Forwarded-For and RFC 7239 Forwarded.
import { describe, expect, it } from "vitest";
import {
  AddressMemo,
  addressKey,
  forwardedFor,
  normalAddress,
  ProxyTrust,
  xForwardedFor,
} from "../../src/http/client-address.js";

describe("normalAddress", () => {
  it.each([
    ["192.0.2.1", "192.0.2.1"],
    ["192.0.2.1:8080", "192.0.2.1"],
    ["::ffff:127.0.0.1", "127.0.0.1"],
    ["[::ffff:7f00:2]:443", "127.0.0.2"],
    ["2001:DB8:0:0:0:0:0:1", "2001:db8::1"],
    ["[2001:db8::17]:4711", "2001:db8::17"],
    ["[2001:db8::17]", "2001:db8::17"],
    ["fe80::1%eth0", "fe80::1"],
    ["::1", "::1"],
    ["::", "::"],
    ["2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
    ["1:0:0:2:0:0:0:3", "1:0:0:2::3"],
    ["::ffff:1.2.3.4", "1.2.3.4"],
    ["64:ff9b::1.2.3.4", "64:ff9b::102:304"],
  ])("%s → %s", (input, out) => expect(normalAddress(input)).toBe(out));

  it.each([
    "",
    "unknown",
    "_hidden",
    "256.0.0.1",
    "1.2.3",
    "1.2.3.4.5",
    "01234.1.1.1",
    "01.2.3.4",
    "1.2.3.4:",
    "1.2.3.4:99999999",
    "[::1",
    "[::1]x",
    "1:2:3:4:5:6:7:8:9",
    "1::2::3",
    "12345::",
    "g::1",
    "::1.2.3",
    "1:2:3:4:5:6:7::8",
    "example.com",
    "x".repeat(100),
  ])("%j is no address", (input) => expect(normalAddress(input)).toBeUndefined());
});

describe("addressKey", () => {
  it("keys IPv4 by the address and IPv6 by its first 64 bits (one host), configurable", () => {
    expect(addressKey("203.0.113.9")).toBe("203.0.113.9");
    expect(addressKey("::ffff:203.0.113.9")).toBe("203.0.113.9");
    expect(addressKey("2001:db8:1:2:aaaa:bbbb:cccc:dddd")).toBe("2001:db8:1:2::/64");
    expect(addressKey("::1")).toBe("::/64");
    expect(addressKey("2001:db8:1:2::1", 48)).toBe("2001:db8:1::/48");
    expect(addressKey("2001:db8:1:2::1", 56)).toBe("2001:db8:1::/56");
    expect(addressKey("2001:db8:1:2ff::1", 56)).toBe("2001:db8:1:200::/56");
    expect(addressKey("2001:db8:1:2::1", 128)).toBe("2001:db8:1:2::1");
    expect(addressKey(undefined)).toBeUndefined();
    expect(addressKey("garbage")).toBeUndefined();
  });

  it("an IPv6 crowd: a thousand addresses of one /64 are one caller, a thousand /64s a thousand", () => {
    const host = new Set<string | undefined>();
    const crowd = new Set<string | undefined>();
    for (let i = 0; i < 1000; i++) {
      host.add(addressKey(`2001:db8:aa:1:${i.toString(16)}:${(i * 7).toString(16)}::1`));
      crowd.add(addressKey(`2001:db8:${i.toString(16)}:${(i * 3).toString(16)}::1`));
    }
    expect([...host]).toEqual(["2001:db8:aa:1::/64"]);
    expect(crowd.size).toBe(1000);
  });
});

describe("X-Forwarded-For and Forwarded", () => {
  it("X-Forwarded-For: addresses with ports and brackets; anything else is null", () => {
    expect(xForwardedFor("203.0.113.9, 198.51.100.2:1234 ,[2001:db8::1]:80, unknown, junk,")).toEqual([
      "203.0.113.9",
      "198.51.100.2",
      "2001:db8::1",
      null,
      null,
      null,
    ]);
  });

  it("Forwarded: quoted values, escapes, other parameters, obfuscated and unknown nodes, case", () => {
    expect(
      forwardedFor(
        'for=192.0.2.60;proto=http;by=203.0.113.43, For="[2001:db8:cafe::17]:4711", for=unknown, for=_hidden, for="_SEV\\"x", proto=https, for="198.51.100.7:80"',
      ),
    ).toEqual(["192.0.2.60", "2001:db8:cafe::17", null, null, null, null, "198.51.100.7"]);
    // a comma inside a quoted value does not split the element
    expect(forwardedFor('for="1.2.3.4, 5.6.7.8", for=9.9.9.9')).toEqual([null, "9.9.9.9"]);
    // empty elements are no hops; OWS around the list's commas and the pairs' semicolons
    expect(forwardedFor(" , for=1.2.3.4 ;proto=http ,, for=5.6.7.8,")).toEqual(["1.2.3.4", "5.6.7.8"]);
  });

  it.each([
    ['for=[::1], for="1.2.3.4"', "an unquoted IPv6 (not a token)"],
    ['for="1.2.3.4, garbage', "a quote never closed"],
    ["nonsense", "a bare word"],
    ['for=1.1.1.1;x=", for=203.0.113.9', "a client's open quote swallowing the proxy's element"],
    ['for="[2001:db8::1]:80, for="[2001:db8::9]"', "a quoted IPv6 left open"],
    ['for="1.1.1.1\\', "an escape at the end"],
    ['for="1.1.1.1\u0001"', "a control character in a quoted string"],
    ["for=1.1.1.1;for=203.0.113.9", "for twice in one element"],
    ["for=1.1.1.1;FOR=203.0.113.9", "for twice, in two cases"],
    ["for=1.1.1.1 for=203.0.113.9", "two pairs without a semicolon"],
    ["for = 1.1.1.1", "spaces around ="],
    ['for=1.1.1.1"x"', "a quote after a token"],
    ["for=", "an empty value"],
  ])("Forwarded %s is broken (%s): undefined, no element believed", (value) => {
    expect(forwardedFor(value)).toBeUndefined();
  });
});

describe("ProxyTrust", () => {
  const xff = (trust: ConstructorParameters<typeof ProxyTrust>[0], peer: string, value: string | null) =>
    new ProxyTrust(trust).client(peer, value);

  it("one hop: the entry the proxy appended, never what the client wrote before it", () => {
    expect(xff(1, "10.0.0.1", "203.0.113.9")).toBe("203.0.113.9");
    // the client forged its own leftmost entry; the proxy appended the real address
    expect(xff(1, "10.0.0.1", "1.1.1.1, 203.0.113.9")).toBe("203.0.113.9");
    expect(xff(1, "10.0.0.1", "1.1.1.1,1.1.1.2, 203.0.113.9")).toBe("203.0.113.9");
    // no header: the peer; the peer in its normal form
    expect(xff(1, "::ffff:10.0.0.1", null)).toBe("10.0.0.1");
  });

  it("two hops: the third address from the right; fewer entries: the leftmost (written by a trusted hop)", () => {
    expect(xff(2, "10.0.0.2", "6.6.6.6, 203.0.113.9, 10.0.0.1")).toBe("203.0.113.9");
    expect(xff({ hops: 2 }, "10.0.0.2", "10.0.0.1")).toBe("10.0.0.1");
  });

  it("ranges: the first address from the right that is not a trusted proxy", () => {
    const trust = ["10.0.0.0/8", "2001:db8:ffff::/48"];
    expect(xff(trust, "10.1.2.3", "6.6.6.6, 203.0.113.9, 10.9.9.9")).toBe("203.0.113.9");
    expect(xff(trust, "2001:db8:ffff::1", "2001:db8:1::5")).toBe("2001:db8:1::5");
    // a peer that is no trusted proxy is the client, whatever it writes
    expect(xff(trust, "203.0.113.9", "10.0.0.1, 1.2.3.4")).toBe("203.0.113.9");
    // every hop trusted: the leftmost
    expect(xff(trust, "10.1.2.3", "10.0.0.7, 10.0.0.8")).toBe("10.0.0.7");
    expect(xff(["loopback"], "127.0.0.1", "127.0.0.9, 203.0.113.9")).toBe("203.0.113.9");
    expect(xff(["private"], "192.168.1.1", "172.16.0.1, 2.2.2.2")).toBe("2.2.2.2");
    expect(xff(["192.168.1.1"], "192.168.1.2", "2.2.2.2")).toBe("192.168.1.2");
  });

  it("an entry that is not an address where the client should be: the address of the hop that wrote it", () => {
    expect(xff(1, "10.0.0.1", "junk")).toBe("10.0.0.1");
    expect(xff(1, "10.0.0.1", "")).toBe("10.0.0.1");
    expect(xff(["10.0.0.0/8"], "10.0.0.1", "1.2.3.4, unknown, 10.0.0.5")).toBe("10.0.0.5");
    // garbage left of the client is never read
    expect(xff(1, "10.0.0.1", "\u0000garbage;;, 203.0.113.9")).toBe("203.0.113.9");
  });

  it("Forwarded, when told to read it (X-Forwarded-For is ignored then, and the other way round)", () => {
    const t = new ProxyTrust({ hops: 1, header: "forwarded" });
    expect(t.header).toBe("forwarded");
    expect(t.client("10.0.0.1", 'for=1.1.1.1, for="[2001:db8::9]:1234";proto=https')).toBe("2001:db8::9");
    expect(t.client("10.0.0.1", "for=_hidden")).toBe("10.0.0.1");
    expect(t.client("10.0.0.1", "for=unknown")).toBe("10.0.0.1");
    expect(new ProxyTrust(1).header).toBe("x-forwarded-for");
  });

  it("Forwarded a client broke: the peer, never an address the client wrote", () => {
    const hop = new ProxyTrust({ hops: 1, header: "forwarded" });
    const range = new ProxyTrust({ ranges: ["10.0.0.0/8"], header: "forwarded" });
    // the client's open quote runs to the end: naively, one element whose for is the client's choice
    for (const forged of [
      'for=1.1.1.1;x="',
      'for=1.1.1.1;x="\\',
      'for="1.1.1.1";for="',
      "for=1.1.1.1;for=1.1.1.2",
    ]) {
      const value = `${forged}, for=203.0.113.9`;
      expect(hop.client("10.0.0.1", value)).toBe("10.0.0.1");
      expect(range.client("10.0.0.1", value)).toBe("10.0.0.1");
    }
    // a quoted IPv6 swallowed by the client's open quote
    expect(hop.client("10.0.0.1", 'for="[2001:db8::6]:1, for="[2001:db8::9]:443"')).toBe("10.0.0.1");
    expect(hop.client("10.0.0.1", 'for="[2001:db8::6]";x=", for="[2001:db8::9]:443"')).toBe("10.0.0.1");
    // the same, well formed: the proxy's entry
    expect(hop.client("10.0.0.1", 'for=1.1.1.1;x="a,b", for=203.0.113.9')).toBe("203.0.113.9");
    expect(hop.client("10.0.0.1", 'for="[2001:db8::6]:1", for="[2001:db8::9]:443"')).toBe("2001:db8::9");
  });

  it("X-Forwarded-For: empty entries, spaces, ports and brackets never stand for the client", () => {
    // what the proxy appended is read whatever the client put before it
    expect(xff(1, "10.0.0.1", ', ,1.1.1.1 2.2.2.2,"[::1", 203.0.113.9')).toBe("203.0.113.9");
    expect(xff(1, "10.0.0.1", "1.1.1.1,\t203.0.113.9:4711")).toBe("203.0.113.9");
    expect(xff(1, "10.0.0.1", "1.1.1.1, [2001:db8::9]:443")).toBe("2001:db8::9");
    // an empty or broken entry where the client should be: the proxy that wrote it, not the entry left of it
    expect(xff(1, "10.0.0.1", "1.1.1.1, ")).toBe("10.0.0.1");
    expect(xff(1, "10.0.0.1", "1.1.1.1,,")).toBe("10.0.0.1");
    expect(xff(1, "10.0.0.1", "1.1.1.1, 2.2.2.2 3.3.3.3")).toBe("10.0.0.1");
    expect(xff(1, "10.0.0.1", "1.1.1.1, [2001:db8::9")).toBe("10.0.0.1");
    // a leading zero is no address (010.0.0.1 is 8.0.0.1 to some readers): never a trusted range's member
    expect(xff(["10.0.0.0/8"], "10.0.0.1", "1.1.1.1, 010.0.0.5")).toBe("10.0.0.1");
  });

  it("a peer the request does not know stays unknown", () => {
    expect(xff(1, undefined as unknown as string, "1.2.3.4")).toBeUndefined();
  });

  it("refuses options that say nothing clear", () => {
    expect(() => new ProxyTrust(0)).toThrow(/positive integer/);
    expect(() => new ProxyTrust(1.5)).toThrow(/positive integer/);
    expect(() => new ProxyTrust(["10.0.0.0/33"])).toThrow(/not an address, a range/);
    expect(() => new ProxyTrust(["10.0.0.0/x"])).toThrow(/not an address, a range/);
    expect(() => new ProxyTrust(["proxy.local"])).toThrow(/not an address, a range/);
    expect(() => new ProxyTrust({ hops: 1, header: "x-real-ip" as "forwarded" })).toThrow(/header/);
    expect(() => new ProxyTrust("1" as unknown as number)).toThrow(/hops, or ranges/);
  });
});

describe("AddressMemo", () => {
  it("asks once per address while it keeps it, and forgets every address once it holds its most", () => {
    const asked: string[] = [];
    const memo = new AddressMemo((a) => {
      asked.push(a);
      return a === "x" ? undefined : normalAddress(a);
    }, 3);
    expect(memo.get("::ffff:127.0.0.2")).toBe("127.0.0.2");
    expect(memo.get("::ffff:127.0.0.2")).toBe("127.0.0.2");
    // an address the function gives nothing for is kept too
    expect(memo.get("x")).toBeUndefined();
    expect(memo.get("x")).toBeUndefined();
    expect(asked).toEqual(["::ffff:127.0.0.2", "x"]);
    memo.get("192.0.2.1");
    // a fourth address: a crowd's new ones cost it no more than its most, and the old are asked again
    memo.get("192.0.2.2");
    expect(memo.get("192.0.2.2")).toBe("192.0.2.2");
    expect(memo.get("::ffff:127.0.0.2")).toBe("127.0.0.2");
    expect(asked).toEqual(["::ffff:127.0.0.2", "x", "192.0.2.1", "192.0.2.2", "::ffff:127.0.0.2"]);
  });
});
