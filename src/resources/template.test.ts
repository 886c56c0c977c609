import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { plain, templateCases, valueUnits } from "../../test/template-cases.js";
import { ErrorCode, McpError } from "../errors.js";
import { parseUriTemplate, type UriExpandValues, type UriTemplate, UriTemplateError } from "./template.js";

describe("match, walking the shared case table", () => {
  for (const c of templateCases) {
    const what = c.expected === null ? "does not match" : "matches";
    it(`${what} ${c.uri} against ${c.template}`, () => {
      expect(plain(parseUriTemplate(c.template).match(c.uri))).toStrictEqual(c.expected);
    });
  }

  for (const c of templateCases) {
    const values = c.expected === null ? undefined : expandable(c.expected);
    if (values === undefined) continue;
    it(`expands ${JSON.stringify(c.expected)} with ${c.template} to a URI that matches back`, () => {
      const t = parseUriTemplate(c.template);
      expect(plain(t.match(t.expand(values)))).toStrictEqual(c.expected);
    });
  }
});

/**
 * `expected` as values to expand: a record whose one key is its variable's name, holding a list, is that
 * list (`{?tags*}` writes a list as repeated keys); another record holding a list has no RFC 6570 value.
 */
function expandable(expected: object): UriExpandValues | undefined {
  const out: { [name: string]: unknown } = {};
  for (const [name, v] of Object.entries(expected)) {
    const lists = typeof v === "object" && !Array.isArray(v) && Object.values(v).some(Array.isArray);
    if (!lists) out[name] = v;
    else if (Object.keys(v).length === 1 && Array.isArray(v[name])) out[name] = v[name];
    else return undefined;
  }
  return out as UriExpandValues;
}

describe("match", () => {
  it("matches {?q,lang} in any order", () => {
    const t = parseUriTemplate("search://{?q,lang}");
    expect(plain(t.match("search://?lang=en&q=mcp"))).toStrictEqual({ q: "mcp", lang: "en" });
    expect(plain(t.match("search://?q=mcp&lang=en"))).toStrictEqual({ q: "mcp", lang: "en" });
  });

  it("omits absent query variables instead of setting them to undefined", () => {
    const params = parseUriTemplate("search://{?q,lang}").match("search://?q=x")!;
    expect(Object.keys(params)).toEqual(["q"]);
    expect("lang" in params).toBe(false);
  });

  it("returns an object without inherited names, so a variable named like an Object member is safe", () => {
    const t = parseUriTemplate("x://{__proto__}{?constructor,toString}");
    const params = t.match("x://a?toString=b")!;
    expect(Object.keys(params)).toEqual(["__proto__", "toString"]);
    expect(Object.getOwnPropertyDescriptor(params, "__proto__")?.value).toBe("a");
    expect(params.toString).toBe("b");
    expect(params.constructor).toBeUndefined();
    expect(Object.getPrototypeOf(Object.getPrototypeOf(params))).toBeNull();
  });

  it("decodes percent-escapes exactly once", () => {
    const t = parseUriTemplate("files://{+path}");
    expect(t.match("files://%252F")?.path).toBe("%2F");
    expect(t.match("files://%25%32%46")?.path).toBe("%2F");
  });

  it("reads + as a plus sign, not a space", () => {
    expect(parseUriTemplate("s://{?q}").match("s://?q=a+b")?.q).toBe("a+b");
  });

  it("compares query keys as written, without decoding them", () => {
    expect(plain(parseUriTemplate("s://{?q}").match("s://?%71=1"))).toStrictEqual({});
  });

  it.each([
    ["%zz", "users://%zz"],
    ["%4", "users://%4"],
    ["%", "users://a%"],
    ["invalid UTF-8", "users://%C3"],
    ["an overlong UTF-8 sequence", "users://%C0%AF"],
    ["an encoded surrogate", "users://%ED%A0%80"],
  ])("throws InvalidParams naming the URI for %s", (_, uri) => {
    const t = parseUriTemplate("users://{id}");
    let error: unknown;
    try {
      t.match(uri);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((error as McpError).message).toContain(uri);
    expect((error as McpError).data).toEqual({ uri });
  });

  it("does not decode, and so does not throw for, a URI whose structure does not match", () => {
    expect(parseUriTemplate("users://{id}").match("users://%zz/more")).toBeNull();
  });

  it("ignores a malformed escape in a query key it does not know", () => {
    expect(plain(parseUriTemplate("s://{?q}").match("s://?q=1&x=%zz"))).toStrictEqual({ q: "1" });
  });

  it("returns null for a URI longer than maxUriLength", () => {
    const t = parseUriTemplate("files://{+path}", { maxUriLength: 20 });
    expect(t.match("files://0123456789ab")).not.toBeNull();
    expect(t.match("files://0123456789abc")).toBeNull();
    expect(parseUriTemplate("files://{+path}").match(`files://${"a".repeat(8192)}`)).toBeNull();
  });

  it("splits {+dir}/{name} at the last slash", () => {
    expect(plain(parseUriTemplate("f://{+dir}/{name}").match("f://a/b/c"))).toStrictEqual({
      dir: "a/b",
      name: "c",
    });
  });

  it("takes a fragment as text when the template declares neither a query nor a fragment", () => {
    expect(parseUriTemplate("f://{+p}").match("f://a?b=1#c")?.p).toBe("a?b=1#c");
    expect(parseUriTemplate("f://{+p}{#f}").match("f://a?b=1#c")).toEqual({ p: "a?b=1", f: "c" });
    expect(parseUriTemplate("f://{+p}{?b}").match("f://a?b=1#c")).toBeNull();
  });

  it("collects the query keys no other variable or literal pair claims into an exploded query variable", () => {
    const t = parseUriTemplate("t://x?kind=a{&q,rest*}");
    expect(plain(t.match("t://x?kind=a&q=1&b=2&kind=z&b=3&c"))).toStrictEqual({
      q: "1",
      rest: { b: ["2", "3"], c: "" },
    });
  });

  it("checks a prefix against the decoded value, in code points", () => {
    const t = parseUriTemplate("p://{v:2}");
    expect(t.match("p://%F0%9D%84%9E%F0%9D%84%9E")?.v).toBe("𝄞𝄞");
    expect(t.match("p://abc")).toBeNull();
  });

  it("matches a URI that writes an encoded literal's characters as they are, or encoded", () => {
    const t = parseUriTemplate("notes://my notes/{id}");
    expect(t.literalPrefix).toBe("notes://my%20notes/");
    expect(t.match("notes://my notes/1")?.id).toBe("1");
    expect(t.match("notes://my%20notes/1")?.id).toBe("1");
    expect(t.match("notes://my notes/\ud800")).toBeNull();
    const emoji = parseUriTemplate("😀/{x}");
    expect(emoji.expand({ x: "1" })).toBe("%F0%9F%98%80/1");
    expect(emoji.match("😀/1")?.x).toBe("1");
    expect(() => parseUriTemplate("a\ud800/{x}")).toThrow(/a lone surrogate/);
    expect(() => parseUriTemplate("a\udc00/{x}")).toThrow(/a lone surrogate/);
  });

  it("reads a map without explode as one string, and a list given to {?x*} as a record of that list", () => {
    const keys = { semi: ";", dot: "." };
    expect(parseUriTemplate("m://{keys}").match(parseUriTemplate("m://{keys}").expand({ keys }))?.keys).toBe(
      "semi,;,dot,.",
    );
    const t = parseUriTemplate("t://{?list*}");
    expect(plain(t.match(t.expand({ list: ["a", "b"] })))).toStrictEqual({ list: { list: ["a", "b"] } });
    // keys that decode to the same name are one key
    expect(plain(t.match("t://?a%62=1&ab=2&c=3"))).toStrictEqual({ list: { ab: ["1", "2"], c: "3" } });
  });
});

describe("expand", () => {
  it("expands every operator", () => {
    const t = parseUriTemplate("x://{a}{/b}{.c}{;d}/{+e}{?f,g}{&h*}{#i}");
    const uri = t.expand({ a: "A B", b: "b/1", c: "c", d: "", e: "e/f", f: "1", h: ["x", "y"], i: "top" });
    expect(uri).toBe("x://A%20B/b%2F1.c;d/e/f?f=1&h=x&h=y#top");
  });

  it("follows RFC 6570 for ordinary values", () => {
    const vars = { var: "value", hello: "Hello World!", path: "/foo/bar", x: "1024", y: "768" };
    const cases: [string, string][] = [
      ["{var}", "value"],
      ["{hello}", "Hello%20World%21"],
      ["{+path}/here", "/foo/bar/here"],
      ["{x,y}", "1024,768"],
      ["{+x,hello,y}", "1024,Hello%20World!,768"],
      ["{#x,hello,y}", "#1024,Hello%20World!,768"],
      ["X{.x,y}", "X.1024.768"],
      ["{/var,x}/here", "/value/1024/here"],
      ["{;x,y}", ";x=1024;y=768"],
      ["{?x,y}", "?x=1024&y=768"],
      ["?fixed=yes{&x}", "?fixed=yes&x=1024"],
    ];
    for (const [template, expected] of cases) {
      const t = parseUriTemplate(template);
      const used = Object.fromEntries(t.variables.map((v) => [v.name, vars[v.name as keyof typeof vars]]));
      expect(t.expand(used)).toBe(expected);
    }
  });

  it("passes %XX through in {+x} and {#x}, as RFC 6570 says, and match decodes it once", () => {
    const t = parseUriTemplate("f://{+path}");
    expect(t.expand({ path: "a%20b%zz" })).toBe("f://a%20b%25zz");
    expect(t.match(t.expand({ path: "a%20b" }))?.path).toBe("a b");
    expect(parseUriTemplate("f://{path}").expand({ path: "a%20b" })).toBe("f://a%2520b");
  });

  it("writes a value as it is where the RFC says so, even when the URI then cannot tell where it ends", () => {
    const t = parseUriTemplate("x://{a}.{b}");
    expect(t.expand({ a: "1.2", b: "3" })).toBe("x://1.2.3");
    expect(plain(t.match("x://1.2.3"))).toStrictEqual({ a: "1", b: "2.3" });
  });

  it("writes {&x} with '&', also at the start of the query, and drops undefined variables", () => {
    expect(parseUriTemplate("s://x{?a}{&b}").expand({ a: "1", b: "2" })).toBe("s://x?a=1&b=2");
    expect(parseUriTemplate("s://x{?a}{&b}").expand({ b: "2" })).toBe("s://x&b=2");
    expect(parseUriTemplate("s://x?{&a}").expand({ a: "1" })).toBe("s://x?&a=1");
    expect(parseUriTemplate("s://x?{&a}").expand({})).toBe("s://x?");
    expect(parseUriTemplate("u://{id}/{+rest}").expand({})).toBe("u:///");
  });

  it("expands lists, maps, prefixes, numbers and booleans", () => {
    const t = parseUriTemplate("x://{a:2}{/list*}{;m*}{?n,b,keys*}", { expandOnly: true });
    const uri = t.expand({
      a: "héllo",
      list: ["x", "y z"],
      m: ["1"],
      n: 6,
      b: true,
      keys: { k: "v", e: "" },
    });
    expect(uri).toBe("x://h%C3%A9/x/y%20z;m=1?n=6&b=true&k=v&e=");
    expect(parseUriTemplate("x://{keys}").expand({ keys: { a: "1", skip: null } })).toBe("x://a,1");
  });

  it("throws a TypeError for a value of no RFC 6570 type, a prefix on a list, or ill-formed Unicode", () => {
    expect(() => parseUriTemplate("u://{id}").expand({ id: Symbol() as never })).toThrow(TypeError);
    expect(() => parseUriTemplate("u://{id:2}").expand({ id: ["a"] })).toThrow(/prefix modifier/);
    expect(() => parseUriTemplate("u://{id}").expand({ id: "\ud800" })).toThrow(/not well-formed Unicode/);
  });

  it("expands, with expandOnly, a template that match cannot read back, and match then throws", () => {
    const t = parseUriTemplate("up{+path}{var}/here", { expandOnly: true });
    expect(t.expand({ path: "/foo/bar", var: "value" })).toBe("up/foo/barvalue/here");
    expect(() => t.match("up/x/here")).toThrow(/two variables must be separated by a literal/);
    expect(() => parseUriTemplate("up{+path}{var}/here")).toThrow(UriTemplateError);
    expect(() => parseUriTemplate("{x:0}", { expandOnly: true })).toThrow(/not a prefix length/);
  });

  it("returns a template without expressions as it is", () => {
    expect(parseUriTemplate("config://app").expand({})).toBe("config://app");
  });
});

describe("parseUriTemplate", () => {
  it("exposes the variables, the literal prefix and whether it is a template", () => {
    const t = parseUriTemplate("github://{owner}/{repo}/blob/{+path}{?ref,tags*}");
    expect(t.template).toBe("github://{owner}/{repo}/blob/{+path}{?ref,tags*}");
    expect(t.isTemplate).toBe(true);
    expect(t.literalPrefix).toBe("github://");
    expect(t.variables).toEqual([
      { name: "owner", operator: "", explode: false, prefix: 0, query: false },
      { name: "repo", operator: "", explode: false, prefix: 0, query: false },
      { name: "path", operator: "+", explode: false, prefix: 0, query: false },
      { name: "ref", operator: "?", explode: false, prefix: 0, query: true },
      { name: "tags", operator: "?", explode: true, prefix: 0, query: true },
    ]);
    const s = parseUriTemplate("config://app");
    expect([s.isTemplate, s.literalPrefix, s.variables]).toEqual([false, "config://app", []]);
    expect(parseUriTemplate("api://items?sort=asc{&page}").literalPrefix).toBe("api://items");
    expect(parseUriTemplate("search://q?term={term}").literalPrefix).toBe("search://q?term=");
    expect(parseUriTemplate("café/{x:3}").variables[0]?.prefix).toBe(3);
  });

  const invalid: [template: string, reason: string, caret: number][] = [
    ["files://{a}{b}", "two variables must be separated by a literal", 11],
    ["files://{a}{+b}", "two variables must be separated by a literal", 11],
    ["files://{/a*}{b}", "two variables must be separated by a literal", 13],
    ["files://{a}/{a}", "the variable 'a' appears twice", 13],
    ["files://{a}{?a}", "the variable 'a' appears twice", 13],
    ["files://{a", "this '{' is never closed", 8],
    ["files://{a{b}", "this '{' is never closed", 8],
    ["files://a}", "a '}' without an opening '{'", 9],
    ["files://{}", "an empty expression", 8],
    ["files://{=x}", "the operator '=' is reserved", 9],
    ["files://{,x}", "the operator ',' is reserved", 9],
    ["files://{!x}", "the operator '!' is reserved", 9],
    ["files://{@x}", "the operator '@' is reserved", 9],
    ["files://{|x}", "the operator '|' is reserved", 9],
    ["files://{a-b}", "'-' is not allowed in a variable name", 10],
    ["files://{a,}", "an empty variable name", 11],
    ["files://{a%2xb}", "a '%' in a variable name that is not a %XX escape", 10],
    ["files://100%/{x}", "a '%' that does not start a %XX escape", 11],
    ["files://{a:0}", "'0' is not a prefix length", 11],
    ["files://{a:10000}", "'10000' is not a prefix length", 11],
    ["files://{a:2*}", "':' is not allowed in a variable name", 10],
    ["files://{a:1}/{a}", "the variable 'a' appears twice", 15],
    ["files://{?a*}{&b*}", "a second exploded query variable", 15],
    ["files://{?a}{?b}", "a second '?' in the query", 12],
    ["files://x?{?b}", "a second '?' in the query", 10],
    ["files://{&a}", "a {&…} before the query starts", 8],
    ["files://q?t={t}{?a}", "a literal '?' before a path expression, and a query after it", 9],
    ["f://a&b{?q}{&p}", "a '&' in the path, and a query that starts with '&'", 5],
    ["files://{a..b}", "'a..b' is not a variable name", 9],
    ["files://{+a}/{+b}", "only one {+…}, {#…} or exploded variable", 13],
    ["files://{/a*}/{+b}", "only one {+…}, {#…} or exploded variable", 14],
    ["files://{/a*,b}", "an exploded variable must be alone", 10],
    ["files://{?q}/x", "only {&…}, '&key=value' or a fragment may follow a query expression", 12],
    ["files://{?q}{x}", "only {?…}, {&…} or a fragment may follow the query", 12],
    ["files://{#f}{?q}", "a query expression after the fragment", 12],
    ["files://{#f*}/x", "an exploded {#…*} must end the template", 8],
    ["files://x?q=1{&q}", "'q' is also a literal query parameter", 15],
  ];
  for (const [template, reason, caret] of invalid) {
    it(`rejects ${template}: ${reason}`, () => {
      let error: unknown;
      try {
        parseUriTemplate(template);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(UriTemplateError);
      const lines = (error as Error).message.split("\n");
      expect(lines[0]).toContain(`Invalid URI template: ${reason}`);
      expect(lines[1]).toBe(`  ${template}`);
      expect(lines[2]).toBe(`  ${" ".repeat(caret)}^`);
      expect(lines[3]).toMatch(/\S/);
      expect((error as UriTemplateError).index).toBe(caret);
    });
  }

  it("accepts adjacent expressions when a prefix or a query keeps them apart", () => {
    for (const template of [
      "f://{a}{/b}",
      "f://{a}{.b}",
      "f://{a}{?q}",
      "f://{a}{/b*}",
      "f://{/a*}{/b}",
      "f://{+a}{#b}",
      "f://{a}.{b}",
    ]) {
      expect(() => parseUriTemplate(template)).not.toThrow();
    }
  });

  it("shows the message of the brief for {a}{b}", () => {
    expect(() => parseUriTemplate("files://{a}{b}")).toThrow(
      "Invalid URI template: two variables must be separated by a literal\n  files://{a}{b}\n             ^\n",
    );
  });

  it("enforces maxTemplateLength and maxVariables", () => {
    expect(() => parseUriTemplate(`x://${"a".repeat(1021)}`)).toThrow(/longer than 1024 characters/);
    expect(() => parseUriTemplate("x://{a}/{b}", { maxTemplateLength: 8 })).toThrow(/longer than 8/);
    const many = `x://${Array.from({ length: 33 }, (_, i) => `{v${i}}`).join("/")}`;
    expect(() => parseUriTemplate(many)).toThrow(/more than 32 variables/);
    expect(() => parseUriTemplate(many, { maxVariables: 33 })).not.toThrow();
  });

  it("shows control characters as ? so that the caret stays on one line under its place", () => {
    expect(() => parseUriTemplate("a\nb{}")).toThrow("\n  a?b{}\n     ^\n");
  });
});

/**
 * Values whose URI determines them, which the property tests feed to `expand`. Unreserved punctuation
 * (`.`, `-`, `_`, `~`) is left out: `expand` writes it as it is (RFC 6570), so `{a}.{b}` with `a = "1.2"`
 * could not be told from `a = "1"`. So are, for `{+x}` and `{#x}`, `%XX` (passed through, then decoded
 * once), `,` (ends all but the last variable), `?`, `#` and `&` (start the query or the fragment). Nor
 * are the letters that the generated templates use as literals.
 */
function valuesOf(t: UriTemplate): fc.Arbitrary<UriExpandValues> {
  const shared = [...valueUnits, "/"];
  const simple = fc.constantFrom(...shared, "%", "%2F", "?", "#", ",", "&", "[");
  const reserved = fc.constantFrom(...shared, "%zz");
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const v of t.variables) {
    const unit = v.operator === "+" || v.operator === "#" ? reserved : simple;
    const text = fc
      .array(unit, { maxLength: 6 })
      .map((a) => a.join(""))
      .map((s) => (v.prefix > 0 ? Array.from(s).slice(0, v.prefix).join("") : s));
    if (v.query && v.explode) {
      const entries = fc.array(
        fc.tuple(
          text.map((k) => `q_${k}`),
          text,
        ),
        { minLength: 1, maxLength: 3 },
      );
      const map = entries.map((kv) => Object.fromEntries(kv));
      record[v.name] = fc.option(map, { nil: undefined });
    } else if (v.query) record[v.name] = fc.option(text, { nil: undefined });
    else if (v.explode && (v.operator === "" || v.operator === "+")) {
      // [""] and [] both expand to nothing, and match reads nothing as []
      record[v.name] = fc.array(text, { maxLength: 4 }).filter((a) => !(a.length === 1 && a[0] === ""));
    } else if (v.explode) record[v.name] = fc.array(text, { maxLength: 4 });
    else record[v.name] = text;
  }
  return fc.record(record).map((r) => {
    const out: Record<string, string | string[] | Record<string, string>> = {};
    for (const [k, v] of Object.entries(r)) if (v !== undefined) out[k] = v as string;
    return out;
  });
}

describe("expand is the inverse of match", () => {
  const templates = [
    ...new Set(templateCases.map((c) => c.template)),
    "x://{a}{.b}",
    "r://{+a,b}/{c}",
    "h://{id}{#a,b}",
    "x://{/a*}{/b}",
    "x://{+base}{#frag}",
    "x://{a}/{+rest}/end{?q}{#f}",
    "x://{a}-{b}-{c}.{ext}",
    "x://{a};{b}",
    "x://{;a*}.{b}",
    "x://{a}{;m*}",
    "x://{+a*}",
    "x://{#a*}",
    "x://{a}{#f*}",
    "x://p/{a}/{b}/{+c}/{d}/{e}",
    "x://{a:3}/{+b:2}{?q:2,r*}",
    "x://{;a:2}.{b}{#c:5}",
    "s://x{?a}{&b,rest*}",
    "ü b/{x}?k=é{&q}",
  ];
  for (const template of templates) {
    it(`round-trips any values through ${template}`, () => {
      const t = parseUriTemplate(template);
      fc.assert(
        fc.property(valuesOf(t), (values) => {
          expect(plain(t.match(t.expand(values)))).toStrictEqual(values);
        }),
        { numRuns: 300 },
      );
    });
  }

  it("round-trips any values through any template the parser accepts", () => {
    const literal = fc.constantFrom(
      "x://",
      "/",
      ".",
      "-",
      "a",
      "ab",
      ";",
      ",",
      "?k=1",
      "&j",
      "#",
      "#h",
      "=",
      ".txt",
      "ü",
      "%41",
      "",
    );
    const expression = fc.record({
      op: fc.constantFrom("", "+", "#", ".", "/", ";", "?", "&"),
      vars: fc.array(fc.constantFrom("", "", "*", ":2"), { minLength: 1, maxLength: 3 }),
    });
    const template = fc
      .array(fc.tuple(literal, expression), { minLength: 1, maxLength: 4 })
      .chain((parts) =>
        literal.map((tail) => {
          let n = 0;
          const body = parts.map(
            ([lit, e]) => `${lit}{${e.op}${e.vars.map((x) => `v${n++}${x}`).join(",")}}`,
          );
          return `s://${body.join("")}${tail}`;
        }),
      )
      .map((text) => {
        try {
          return parseUriTemplate(text);
        } catch (e) {
          if (e instanceof UriTemplateError) return null;
          throw e;
        }
      })
      .filter((t): t is UriTemplate => t !== null);
    fc.assert(
      fc.property(
        template.chain((t) => valuesOf(t).map((v) => [t, v] as const)),
        ([t, values]) => {
          expect(plain(t.match(t.expand(values)))).toStrictEqual(values);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe("match on hostile input", () => {
  it("never throws anything but McpError(InvalidParams) for any string", () => {
    const templates = [...new Set(templateCases.map((c) => c.template))].map((t) => parseUriTemplate(t));
    const uri = fc.string({
      unit: fc.constantFrom(
        "a",
        "/",
        "?",
        "#",
        "%",
        "%2",
        "%41",
        "=",
        "&",
        ",",
        ".",
        ";",
        ":",
        "é",
        "\ud800",
      ),
    });
    fc.assert(
      fc.property(uri, fc.constantFrom(...templates), (u, t) => {
        try {
          const m = t.match(t.literalPrefix + u);
          if (m !== null)
            for (const v of Object.values(m))
              expect(
                typeof v === "string" ||
                  Array.isArray(v) ||
                  Object.values(v).every((x) => typeof x === "string"),
              ).toBe(true);
        } catch (e) {
          expect(e).toBeInstanceOf(McpError);
          expect((e as McpError).code).toBe(ErrorCode.InvalidParams);
        }
      }),
      { numRuns: 300 },
    );
  });

  // No regex and no backtracking: 8× the URI costs about 8× the time (or less, when it fails early).
  // Each URI either matches with long values, so that every character is scanned, or is a near miss
  // that a backtracking matcher would retry at every split (quadratic or worse).
  const pathological: [template: string, uri: (n: number) => string][] = [
    ["x://{a}-x-{b}", (n) => `x://${"-x".repeat(n / 2)}/`],
    ["x://{a}-x-{b}", (n) => `x://${"a".repeat(n / 2)}-x-${"b".repeat(n / 2)}/`],
    ["x://{a}.{b}.{c}.txt", (n) => `x://${"a.".repeat(n / 4)}${"b".repeat(n / 2)}.c.txt`],
    ["x://{a}.{b}.{c}.txt", (n) => `x://${".".repeat(n)}`],
    ["x://{+a}/{b}/{c}", (n) => `x://${"a/".repeat(n / 2)}b/c`],
    ["x://{+a}/{b}/{c}", (n) => `x://${"/".repeat(n)}?`],
    ["files://root{/segs*}.json", (n) => `files://root${"/a".repeat(n / 2)}.json`],
    ["files://root{/segs*}.json", (n) => `files://root${"/.json".repeat(n / 6)}?`],
    ["m://x{;a,b}", (n) => `m://x;a=${";a".repeat(n / 2)}`],
    ["m://x{;a,b}", (n) => `m://x;a=${"1".repeat(n)};b=2`],
    ["s://{?q,lang}{&x*}", (n) => `s://?${"x=1&q&lang=&".repeat(n / 12)}`],
    ["s://x?k=1{&q}", (n) => `s://x?${"k=2&".repeat(n / 4)}k=1`],
    ["x://{a},{b}{.c*}", (n) => `x://a,${"b".repeat(n / 2)}${".c".repeat(n / 4)}`],
    ["s://{?a,rest*}", (n) => `s://?${"k=1&".repeat(n / 4)}`],
    ["s://x?k=1{&rest*}", (n) => `s://x?${"j=2&".repeat(n / 4)}k=1`],
    ["café/{+x}", (n) => `café/${"é".repeat(n / 2)}`],
    ["cal://{y:4}/{+rest}", (n) => `cal://${"1".repeat(n / 2)}/${"a".repeat(n / 2)}`],
    // variables that may be absent: each looks ahead once, never retries a split
    ["{;v,bar,who}", (n) => `;v=${";b".repeat(n / 2)}`],
    ["x://{a}{/b}{.c}{/d}", (n) => `x://${"/.".repeat(n / 2)}`],
    ["/base{/g,f}/pages{/p,l}", (n) => `/base${"/p".repeat(n / 2)}`],
    ["x://{+a}{/b}{.c}", (n) => `x://${"a".repeat(n)}`],
  ];
  for (const [template, uri] of pathological) {
    it(`matches a pathological 8 KB URI like ${uri(16)} against ${template} in linear time`, () => {
      const t = parseUriTemplate(template);
      const time = (u: string) => {
        let best = Number.POSITIVE_INFINITY;
        for (let round = 0; round < 5; round++) {
          const start = performance.now();
          for (let i = 0; i < 20; i++) t.match(u);
          best = Math.min(best, performance.now() - start);
        }
        return best / 20;
      };
      const small = uri(1000);
      const big = uri(8000);
      expect(big.length).toBeLessThanOrEqual(8192);
      time(small);
      const ratio = time(big) / Math.max(time(small), 0.001);
      expect(time(big)).toBeLessThan(5);
      expect(ratio).toBeLessThan(24);
    });
  }
});
