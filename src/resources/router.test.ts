import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TemplateRouter } from "./router.js";
import { parseUriTemplate, type UriTemplate } from "./template.js";

function routerOf(...templates: string[]): TemplateRouter<string> {
  const router = new TemplateRouter<string>();
  for (const t of templates) router.add(parseUriTemplate(t), t);
  return router;
}

describe("TemplateRouter", () => {
  it("returns the value, the decoded params and the template", () => {
    const router = new TemplateRouter<number>();
    const t = parseUriTemplate("users://{id}");
    router.add(t, 7);
    const m = router.match("users://a%20b");
    expect(m?.value).toBe(7);
    expect(m?.template).toBe(t);
    expect({ ...m?.params }).toEqual({ id: "a b" });
  });

  it("returns null when nothing matches", () => {
    const router = routerOf("users://{id}", "files://{+path}");
    expect(router.match("users://a/b")).toBeNull();
    expect(router.match("other://x")).toBeNull();
    expect(router.match("")).toBeNull();
  });

  it("prefers the longer literal prefix", () => {
    const router = routerOf("files://{+path}", "files://docs/{name}");
    expect(router.match("files://docs/a.md")?.value).toBe("files://docs/{name}");
    expect(router.match("files://src/a.ts")?.value).toBe("files://{+path}");
  });

  it("falls back to a shorter prefix when the more specific template does not match", () => {
    const router = routerOf("files://{+path}", "files://docs/{name}");
    expect(router.match("files://docs/a/b.md")?.value).toBe("files://{+path}");
  });

  it("prefers more literal characters among equal prefixes", () => {
    const router = routerOf("x://{a}/{b}", "x://{a}/edit");
    expect(router.match("x://1/edit")?.value).toBe("x://{a}/edit");
    expect(router.match("x://1/view")?.value).toBe("x://{a}/{b}");
  });

  it("prefers a simple variable to {+…} among equal literals", () => {
    const router = routerOf("x://{+a}", "x://{a}");
    expect(router.match("x://1")?.value).toBe("x://{a}");
    expect(router.match("x://1/2")?.value).toBe("x://{+a}");
  });

  it("prefers fewer variables among equal literals", () => {
    const router = routerOf("x://{a}{?q}", "x://{a}");
    expect(router.match("x://1")?.value).toBe("x://{a}");
    expect(router.match("x://1?q=2")?.value).toBe("x://{a}{?q}");
  });

  it("breaks the remaining ties by registration order", () => {
    expect(routerOf("x://{a}", "x://{b}").match("x://1")?.value).toBe("x://{a}");
    expect(routerOf("x://{b}", "x://{a}").match("x://1")?.value).toBe("x://{b}");
  });

  it("lets a template without expressions beat the templates that also match its URI", () => {
    const router = routerOf("config://{name}", "config://{+rest}", "config://app");
    expect(router.match("config://app")?.value).toBe("config://app");
    expect(router.match("config://other")?.value).toBe("config://{name}");
  });

  it("tries a template with an empty literal prefix last", () => {
    const router = routerOf("{+uri}", "users://{id}");
    expect(router.match("users://1")?.value).toBe("users://{id}");
    expect(router.match("users://1/2")?.value).toBe("{+uri}");
    expect(router.match("anything")?.value).toBe("{+uri}");
  });

  it("indexes a literal query by the path before it", () => {
    const router = routerOf("api://items?sort=asc{&page}", "api://items{?page}");
    expect(router.match("api://items?page=2&sort=asc")?.value).toBe("api://items?sort=asc{&page}");
    expect(router.match("api://items?page=2")?.value).toBe("api://items{?page}");
  });

  it("finds a template whose literal is encoded from a URI that writes it either way", () => {
    const router = routerOf("café://menu/{dish}", "cafe://menu/{dish}");
    expect(router.match("café://menu/cr%C3%AApe")?.value).toBe("café://menu/{dish}");
    expect(router.match("caf%C3%A9://menu/x")?.value).toBe("café://menu/{dish}");
    expect({ ...router.match("café://menu/crêpe")?.params }).toEqual({ dish: "crêpe" });
    expect(router.match("cafe://menu/x")?.value).toBe("cafe://menu/{dish}");
    expect(router.match("café://menu/\ud800")).toBeNull();
    const users = routerOf("café://{x}", "users://{id}");
    expect(() => users.match("users://é%zz")).toThrow(
      expect.objectContaining({ data: { uri: "users://é%zz" } }),
    );
  });

  it("indexes a template with a literal '?' in its path by the whole literal before its first expression", () => {
    const router = routerOf("search://q?term={term}", "search://{+rest}");
    expect(router.match("search://q?term=mcp")?.value).toBe("search://q?term={term}");
    expect(router.match("search://q?other=1")?.value).toBe("search://{+rest}");
  });

  it("removes a template, once, with the function add returns", () => {
    const router = new TemplateRouter<string>();
    const removeDocs = router.add(parseUriTemplate("files://docs/{name}"), "docs");
    router.add(parseUriTemplate("files://{+path}"), "any");
    expect(router.size).toBe(2);
    removeDocs();
    removeDocs();
    expect(router.size).toBe(1);
    expect(router.match("files://docs/a")?.value).toBe("any");
    const again = router.add(parseUriTemplate("files://docs/{name}"), "docs again");
    expect(router.match("files://docs/a")?.value).toBe("docs again");
    again();
    expect(router.match("files://docs/a")?.value).toBe("any");
  });

  it("keeps working when prefixes split and merge edges", () => {
    const router = routerOf("api://v1/x{a}", "api://v2/{a}", "api://v1/{a}", "api://{a}", "api://v1/xy{a}");
    expect(router.match("api://v1/xyz")?.value).toBe("api://v1/xy{a}");
    expect(router.match("api://v1/xz")?.value).toBe("api://v1/x{a}");
    expect(router.match("api://v1/z")?.value).toBe("api://v1/{a}");
    expect(router.match("api://v2/z")?.value).toBe("api://v2/{a}");
    expect(router.match("api://v3")?.value).toBe("api://{a}");
  });

  it("does not try every template: a match with 5,000 registered calls match on a handful", () => {
    const router = new TemplateRouter<number>();
    let calls = 0;
    for (let i = 0; i < 5000; i++) {
      const t = parseUriTemplate(`api://v1/resource${i}/{id}{?fields}`);
      const counted: UriTemplate = {
        ...t,
        variables: t.variables,
        match: (uri) => {
          calls++;
          return t.match(uri);
        },
        expand: (v) => t.expand(v),
      };
      router.add(counted, i);
    }
    expect(router.match("api://v1/resource4321/7?fields=a")?.value).toBe(4321);
    expect(calls).toBeLessThanOrEqual(3);
    calls = 0;
    expect(router.match("api://v1/resource4321x/7")).toBeNull();
    expect(router.match("nope://v1/resource1/7")).toBeNull();
    expect(calls).toBeLessThanOrEqual(3);
  });

  it("agrees with trying every template in the documented order", () => {
    const pool = [
      "a://{x}",
      "a://{+x}",
      "a://{x}/{y}",
      "a://b/{x}",
      "a://b{/x*}",
      "a://b/{x}.txt",
      "a://{x}{?q}",
      "a://b",
      "a://b/c",
      "a://{x}/c",
      "b://{x}",
      "{+all}",
      "a://b/{+rest}",
      "a://b/{x}{#f}",
    ];
    const uri = fc
      .array(fc.constantFrom("a://", "b://", "b", "/", "c", ".txt", "?q=1", "#f", "x"), { maxLength: 5 })
      .map((p) => p.join(""));
    fc.assert(
      fc.property(
        fc.shuffledSubarray(pool, { minLength: 1 }),
        fc.array(uri, { minLength: 1, maxLength: 10 }),
        (templates, uris) => {
          const router = routerOf(...templates);
          const ranked = templates
            .map((t, order) => ({ t: parseUriTemplate(t), order }))
            .sort((a, b) => precedence(a.t, a.order, b.t, b.order));
          for (const u of uris) {
            const expected = ranked.find((r) => r.t.match(u) !== null)?.t.template ?? null;
            expect(router.match(u)?.value ?? null).toBe(expected);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

/** The documented precedence, written the naive way: < 0 when (a, ao) goes first. */
function precedence(a: UriTemplate, ao: number, b: UriTemplate, bo: number): number {
  const literals = (t: UriTemplate) => t.template.replace(/\{[^}]*\}/g, "").length;
  const wide = (t: UriTemplate) =>
    t.variables.filter((v) => v.explode || v.operator === "+" || v.operator === "#").length;
  return (
    b.literalPrefix.length - a.literalPrefix.length ||
    literals(b) - literals(a) ||
    wide(a) - wide(b) ||
    a.variables.length - b.variables.length ||
    ao - bo
  );
}
