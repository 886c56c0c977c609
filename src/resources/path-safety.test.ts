import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { traversalCorpus } from "../../test/traversal-corpus.js";
import { ErrorCode, McpError } from "../errors.js";
import { isUnsafePathValue, PathEscapeError, safeJoin } from "./path-safety.js";
import { parseUriTemplate } from "./template.js";

describe("isUnsafePathValue", () => {
  it.each([
    "..",
    "../a",
    "a/../../b",
    "./..",
    "a/b/../../..",
    "..\\x",
    "a\\..\\..\\b",
    "/etc/passwd",
    "\\\\server\\share",
    "\\x",
    "C:",
    "c:\\",
    "C:/",
    "z:x",
    "a\0b",
    "\0",
    "...",
    ".. ",
    "a/. ./..",
  ])("flags %j", (value) => {
    expect(isUnsafePathValue(value)).toBe(true);
  });

  it.each([
    "",
    "a",
    "a/../b",
    "a/b/../..",
    "./a",
    "a/./b",
    "..a",
    "a..",
    "a/..b",
    "%2e%2e",
    "%2e%2e%2f",
    "1:2",
    "ab:c",
    " ",
    "a//b",
    "a/",
  ])("accepts %j", (value) => {
    expect(isUnsafePathValue(value)).toBe(false);
  });

  it("checks each element of a list and the path they form", () => {
    expect(isUnsafePathValue(["a", "b"])).toBe(false);
    expect(isUnsafePathValue(["a", "b/../c"])).toBe(false);
    // a handler may use each element on its own, so a ".." element is flagged even where the whole path stays inside
    expect(isUnsafePathValue(["a", ".."])).toBe(true);
    expect(isUnsafePathValue([".."])).toBe(true);
    expect(isUnsafePathValue(["a", "..", ".."])).toBe(true);
    expect(isUnsafePathValue(["a/../..", "b"])).toBe(true);
    expect(isUnsafePathValue(["", "etc"])).toBe(true);
    expect(isUnsafePathValue(["a", "C:"])).toBe(true);
    expect(isUnsafePathValue([])).toBe(false);
  });

  it("agrees with safeJoin: a value it accepts never leaves the base", () => {
    const segment = fc.constantFrom("a", "b", ".", "..", "", "c:", "\\", "/", "...", "\0", " ");
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 8 }), (parts) => {
        const value = parts.join("");
        if (isUnsafePathValue(value)) return;
        expect(() => safeJoin("/srv/base", value)).not.toThrow();
        expect(safeJoin("/srv/base", value).startsWith("/srv/base")).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("safeJoin", () => {
  it.each([
    [["/srv/docs", "a.md"], "/srv/docs/a.md"],
    [["/srv/docs", "guides/../intro.md"], "/srv/docs/intro.md"],
    [["/srv/docs", "a", "b/./c"], "/srv/docs/a/b/c"],
    [["/srv/docs/", "a/"], "/srv/docs/a"],
    [["/srv/docs", "a/.."], "/srv/docs"],
    [["/srv/docs", "a\\b"], "/srv/docs/a/b"],
    [["/srv/./x/../docs", "a"], "/srv/docs/a"],
    [["docs", "a"], "docs/a"],
    [["../shared", "a"], "../shared/a"],
    [["", "a"], "a"],
    [[".", ""], "."],
    [["/", "etc"], "/etc"],
    [["C:\\data", "x"], "C:/data/x"],
    [["\\\\server\\share", "x"], "//server/share/x"],
    [["/srv", "%2e%2e"], "/srv/%2e%2e"],
  ] as const)("joins %j into %j", (args, expected) => {
    expect(safeJoin(...(args as unknown as [string, ...string[]]))).toBe(expected);
  });

  it.each([
    ["/srv/docs", "../etc/passwd", "leaves its base"],
    ["/srv/docs", "a/../../x", "leaves its base"],
    ["/srv/docs", "..", "leaves its base"],
    ["/srv/docs", "..\\x", "leaves its base"],
    ["/srv/docs", "/etc/passwd", "is absolute"],
    ["/srv/docs", "\\\\server\\share", "is absolute"],
    ["/srv/docs", "C:/x", "is absolute"],
    ["/srv/docs", "c:x", "is absolute"],
    ["/srv/docs", "a\0b", "NUL"],
    ["/srv/docs", "...", "only dots and spaces"],
    ["docs", "..", "leaves its base"],
  ])("refuses to join %j and %j", (base, part, reason) => {
    expect(() => safeJoin(base, part)).toThrow(PathEscapeError);
    expect(() => safeJoin(base, part)).toThrow(reason);
  });

  it("counts the base's depth per call, not per part", () => {
    expect(safeJoin("/srv", "a", "..", "b")).toBe("/srv/b");
    expect(() => safeJoin("/srv", "a", "..", "..")).toThrow(PathEscapeError);
  });

  it("exposes the base and the rejected part on the error", () => {
    try {
      safeJoin("/srv", "../x");
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(PathEscapeError);
      expect([(e as PathEscapeError).base, (e as PathEscapeError).part]).toEqual(["/srv", "../x"]);
    }
  });
});

describe("the traversal corpus through templates", () => {
  const placements = [
    { template: "files://{name}", uri: (raw: string) => `files://${raw}`, name: "name", mustMatch: false },
    { template: "files://{+path}", uri: (raw: string) => `files://${raw}`, name: "path", mustMatch: true },
    {
      template: "files://{+path}.md",
      uri: (raw: string) => `files://${raw}.md`,
      name: "path",
      mustMatch: true,
    },
    {
      template: "files://x{?path}",
      uri: (raw: string) => `files://x?path=${raw}`,
      name: "path",
      mustMatch: true,
    },
    {
      template: "files://root{/segs*}",
      uri: (raw: string) => `files://root/${raw}`,
      name: "segs",
      mustMatch: true,
    },
  ];
  for (const p of placements) {
    const t = parseUriTemplate(p.template);
    for (const c of traversalCorpus) {
      it(`${c.unsafe ? "stops" : "lets through"} ${c.raw} in ${p.template} (${c.why})`, () => {
        let outcome: "malformed" | "no match" | "flagged" | "safe";
        try {
          const m = t.match(p.uri(c.raw));
          outcome = m === null ? "no match" : isUnsafePathValue(m[p.name]!) ? "flagged" : "safe";
        } catch (e) {
          expect(e).toBeInstanceOf(McpError);
          expect((e as McpError).code).toBe(ErrorCode.InvalidParams);
          outcome = "malformed";
        }
        if (c.unsafe) expect(outcome).not.toBe("safe");
        else if (p.name === "segs" && c.raw.split("/").includes("..")) expect(outcome).toBe("flagged");
        else expect(outcome).toBe(p.mustMatch || outcome === "safe" ? "safe" : "no match");
      });
    }
  }
});
