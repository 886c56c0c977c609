import { describe, expect, it } from "vitest";
import { type AddressKind, addressKind, isIpAddress } from "./addresses.js";

const cases: [string, AddressKind | undefined][] = [
  ["8.8.8.8", undefined],
  ["93.184.215.14", undefined],
  ["2606:4700::1111", undefined],
  ["::ffff:8.8.8.8", undefined],
  ["10.0.0.1", "private"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["172.32.0.1", undefined],
  ["192.168.1.1", "private"],
  ["127.0.0.1", "loopback"],
  ["127.255.0.9", "loopback"],
  ["169.254.169.254", "link-local"],
  ["100.64.0.1", "shared"],
  ["100.127.255.255", "shared"],
  ["100.128.0.1", undefined],
  ["0.0.0.0", "unspecified"],
  ["0.1.2.3", "unspecified"],
  ["255.255.255.255", "broadcast"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["240.0.0.1", "reserved"],
  ["192.0.2.1", "documentation"],
  ["198.51.100.7", "documentation"],
  ["203.0.113.9", "documentation"],
  ["198.18.0.1", "reserved"],
  ["::", "unspecified"],
  ["::1", "loopback"],
  ["[::1]", "loopback"],
  ["0:0:0:0:0:0:0:1", "loopback"],
  ["::ffff:10.0.0.1", "private"],
  ["::ffff:a00:1", "private"],
  ["::FFFF:169.254.169.254", "link-local"],
  ["::ffff:127.0.0.1", "loopback"],
  ["::ffff:0.0.0.0", "unspecified"],
  ["::127.0.0.1", "reserved"],
  ["::10.0.0.1", "reserved"],
  ["64:ff9b::a00:1", "private"],
  ["64:ff9b::8.8.8.8", undefined],
  ["2002:a00:1::", "private"],
  ["2002:808:808::", undefined],
  ["fd00::1", "unique-local"],
  ["fc00::1", "unique-local"],
  ["fe80::1", "link-local"],
  ["fe80::1%eth0", "link-local"],
  ["febf::1", "link-local"],
  ["fec0::1", "private"],
  ["ff02::1", "multicast"],
  ["2001:db8::1", "documentation"],
  ["2001::1", "reserved"],
  ["100::1", "reserved"],
  ["1:2:3:4:5:6:7:8", "reserved"],
  ["1.2.3", "reserved"],
  ["01.2.3.4", "reserved"],
  ["1::2::3", "reserved"],
  ["1:2:3:4:5:6:7:8:9", "reserved"],
  ["2001:4860:4860::8888:1:2:3", undefined],
  ["2001:4860:4860:0:8888::1:2:3", "reserved"],
  ["example.com", "reserved"],
];

describe("addressKind", () => {
  it.each(cases)("classes %s as %s", (address, kind) => {
    expect(addressKind(address)).toBe(kind);
  });

  it("knows an address literal from a name", () => {
    expect(["10.0.0.1", "::1", "::ffff:1.2.3.4", "fe80::1%lo0"].map(isIpAddress)).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(["example.com", "1.2.3", "::g", "localhost"].map(isIpAddress)).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });
});
