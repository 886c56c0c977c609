/**
 * The one table of URI template cases, walked twice: at runtime by `src/uri-template.test.ts`
 * (`parseUriTemplate(template).match(uri)` deep-equals `expected`) and at type level by
 * `test/resources/uri-params.types.test.ts` (`UriParams<template>` has exactly `expected`'s shape).
 * `expected: null` means the URI does not match.
 */
export const templateCases = [
  // simple string {var}: one segment, no raw / ? #; empty (RFC 6570 writes "" as nothing); a raw "," is
  // what a list without explode writes, read as one string
  { template: "users://{id}", uri: "users://42", expected: { id: "42" } },
  { template: "users://{id}", uri: "users://42/", expected: null },
  { template: "users://{id}", uri: "users://", expected: { id: "" } },
  { template: "users://{id}", uri: "users://a,b", expected: { id: "a,b" } },
  { template: "O{empty}X", uri: "OX", expected: { empty: "" } },
  { template: "users://{id}", uri: "users://42?tab=1", expected: null },
  { template: "users://{id}", uri: "users://42#top", expected: null },
  { template: "users://{id}", uri: "admins://42", expected: null },
  { template: "users://{id}", uri: "users://a+b", expected: { id: "a+b" } },
  { template: "users://{id}", uri: "users://a%2Fb", expected: { id: "a/b" } },
  { template: "users://{id}", uri: "users://%252F", expected: { id: "%2F" } },
  { template: "users://{id}", uri: "users://caf%C3%A9", expected: { id: "café" } },
  { template: "users://{id}", uri: "users://café", expected: { id: "café" } },
  { template: "users://{id}", uri: "users://%F0%9F%98%80", expected: { id: "😀" } },
  {
    template: "github://{owner}/{repo}/readme",
    uri: "github://octo/hello/readme",
    expected: { owner: "octo", repo: "hello" },
  },
  { template: "github://{owner}/{repo}/readme", uri: "github://octo/hello/world/readme", expected: null },
  { template: "github://{owner}/{repo}/readme", uri: "github://octo/hello/readme/", expected: null },
  // literals between variables: the first occurrence ends a variable, a trailing literal is anchored at the end
  { template: "x://{a}.{b}", uri: "x://x.y.z", expected: { a: "x", b: "y.z" } },
  { template: "notes://{name}.txt", uri: "notes://my.notes.txt", expected: { name: "my.notes" } },
  { template: "notes://{name}.txt", uri: "notes://my.notes.md", expected: null },
  { template: "x://{a}-x-{b}", uri: "x://foo-bar-x-baz", expected: { a: "foo-bar", b: "baz" } },
  // comma lists are several variables, not one list
  { template: "map://{x,y}", uri: "map://1,2", expected: { x: "1", y: "2" } },
  { template: "map://{x,y}", uri: "map://1,2,3", expected: { x: "1", y: "2,3" } },
  // ...the first always there, the others absent (undefined) where the URI has no "," for them
  { template: "map://{x,y}", uri: "map://1", expected: { x: "1" } },
  { template: "map://{x,y}", uri: "map://", expected: { x: "" } },
  { template: "map://{x,y}", uri: "map://1,", expected: { x: "1", y: "" } },
  { template: "?{x,undef}", uri: "?1024", expected: { x: "1024" } },
  // reserved {+var}: anything, / included; stops before ? and # only when the template has a query or fragment
  { template: "files://{+path}", uri: "files://src/index.ts", expected: { path: "src/index.ts" } },
  { template: "files://{+path}", uri: "files://a?b#c", expected: { path: "a?b#c" } },
  { template: "files://{+path}", uri: "files://", expected: { path: "" } },
  { template: "files://{+path}", uri: "files://a%2Fb%3Fc", expected: { path: "a/b?c" } },
  { template: "files://{+path}{?rev}", uri: "files://a/b?rev=2", expected: { path: "a/b", rev: "2" } },
  { template: "files://{+path}{?rev}", uri: "files://a/b/", expected: { path: "a/b/" } },
  { template: "files://{+dir}/{name}", uri: "files://a/b/c.txt", expected: { dir: "a/b", name: "c.txt" } },
  { template: "files://{+dir}/{name}", uri: "files://c.txt", expected: null },
  { template: "files://{+path}.md", uri: "files://a.md/b.md", expected: { path: "a.md/b" } },
  { template: "tree://{+a,b}", uri: "tree://x/y,z/w", expected: { a: "x/y", b: "z/w" } },
  // fragment {#var}
  { template: "doc://{id}{#section}", uri: "doc://5#intro", expected: { id: "5", section: "intro" } },
  { template: "doc://{id}{#section}", uri: "doc://5#a/b?c", expected: { id: "5", section: "a/b?c" } },
  { template: "doc://{id}{#section}", uri: "doc://5#", expected: { id: "5", section: "" } },
  { template: "doc://{id}{#section}", uri: "doc://5", expected: { id: "5" } },
  { template: "foo{#undef}", uri: "foo", expected: {} },
  { template: "h://x{#a,b}", uri: "h://x#1", expected: { a: "1" } },
  { template: "h://x{#a,b}", uri: "h://x#1,2/3", expected: { a: "1", b: "2/3" } },
  // label {.var}
  { template: "file://{name}{.ext}", uri: "file://readme.md", expected: { name: "readme", ext: "md" } },
  {
    template: "file://{name}{.ext}",
    uri: "file://archive.tar.gz",
    expected: { name: "archive", ext: "tar.gz" },
  },
  { template: "file://{name}{.ext}", uri: "file://readme", expected: { name: "readme" } },
  { template: "file://{name}{.ext}", uri: "file://readme.", expected: { name: "readme", ext: "" } },
  { template: "X{.undef}", uri: "X", expected: {} },
  { template: "file://{name}{.ext}", uri: "file://a/b", expected: null },
  // path segments {/var}
  { template: "x://root{/a,b}", uri: "x://root/1/2", expected: { a: "1", b: "2" } },
  { template: "x://root{/a}", uri: "x://root/", expected: { a: "" } },
  { template: "x://root{/a}", uri: "x://root/1/2", expected: null },
  { template: "x://root{/a}", uri: "x://root", expected: {} },
  { template: "{/var,undef}", uri: "/value", expected: { var: "value" } },
  { template: "x://{/a}/{b}", uri: "x:///5", expected: { b: "5" } },
  { template: "x://{/a}/{b}", uri: "x:////5", expected: { a: "", b: "5" } },
  {
    template: "/base{/group_id,first_name}/pages{/page,lang}",
    uri: "/base/pages/1",
    expected: { page: "1" },
  },
  {
    template: "/base{/group_id,first_name}/pages{/page,lang}",
    uri: "/base//pages",
    expected: { group_id: "" },
  },
  { template: "x://{+base}{/name}", uri: "x://p", expected: { base: "p" } },
  { template: "x://{+base}{/name}", uri: "x://p/q/r", expected: { base: "p/q", name: "r" } },
  // explode: string[]
  { template: "files://root{/segs*}", uri: "files://root/a/b/c", expected: { segs: ["a", "b", "c"] } },
  { template: "files://root{/segs*}", uri: "files://root", expected: { segs: [] } },
  { template: "files://root{/segs*}", uri: "files://root/a//b/", expected: { segs: ["a", "", "b", ""] } },
  { template: "files://root{/segs*}", uri: "files://root/a%2Fb", expected: { segs: ["a/b"] } },
  { template: "files://root{/segs*}", uri: "files://rootx", expected: null },
  { template: "files://root{/segs*}.json", uri: "files://root/a/b.json", expected: { segs: ["a", "b"] } },
  { template: "x://{a}{/rest*}", uri: "x://p/q/r", expected: { a: "p", rest: ["q", "r"] } },
  { template: "x://{a}{/rest*}", uri: "x://p", expected: { a: "p", rest: [] } },
  { template: "list://{items*}", uri: "list://a,b,c", expected: { items: ["a", "b", "c"] } },
  { template: "dots://x{.parts*}", uri: "dots://x.a.b", expected: { parts: ["a", "b"] } },
  // path-style parameters {;var}
  { template: "m://x{;a,b}", uri: "m://x;a=1;b=2", expected: { a: "1", b: "2" } },
  { template: "m://x{;a,b}", uri: "m://x;a;b=2", expected: { a: "", b: "2" } },
  { template: "m://x{;a,b}", uri: "m://x;b=2;a=1", expected: null },
  // ...each named, so any of them may be absent
  { template: "m://x{;a,b}", uri: "m://x;b=2", expected: { b: "2" } },
  { template: "m://x{;a,b}", uri: "m://x", expected: {} },
  { template: "{;x,y,undef}", uri: ";x=1024;y=768", expected: { x: "1024", y: "768" } },
  { template: "{;v,bar,who}", uri: ";v=6;who=fred", expected: { v: "6", who: "fred" } },
  { template: "m://x{;a,ab}", uri: "m://x;ab=1", expected: { ab: "1" } },
  { template: "m://x{;list*}", uri: "m://x;list=a;list=b", expected: { list: ["a", "b"] } },
  // query {?a,b} and {&c}: optional, any order, unknown keys ignored, absent keys omitted
  { template: "search://{?q,lang}", uri: "search://?q=mcp&lang=en", expected: { q: "mcp", lang: "en" } },
  { template: "search://{?q,lang}", uri: "search://?lang=en&q=mcp", expected: { q: "mcp", lang: "en" } },
  { template: "search://{?q,lang}", uri: "search://", expected: {} },
  { template: "search://{?q,lang}", uri: "search://?q=mcp", expected: { q: "mcp" } },
  { template: "search://{?q,lang}", uri: "search://?q=mcp&page=2&&x", expected: { q: "mcp" } },
  { template: "search://{?q,lang}", uri: "search://?q=", expected: { q: "" } },
  { template: "search://{?q,lang}", uri: "search://?q", expected: { q: "" } },
  { template: "search://{?q,lang}", uri: "search://?q=a+b", expected: { q: "a+b" } },
  { template: "search://{?q,lang}", uri: "search://?q=a%20b%26c", expected: { q: "a b&c" } },
  { template: "search://{?q,lang}", uri: "search://?q=%2525", expected: { q: "%25" } },
  { template: "search://{?q,lang}", uri: "search://?q=1&q=2", expected: { q: "1" } },
  { template: "search://{?q,lang}", uri: "search://?q=a=b,c/d?e", expected: { q: "a=b,c/d?e" } },
  { template: "search://{?q,lang}", uri: "search://?q=日本", expected: { q: "日本" } },
  { template: "search://{?q,lang}", uri: "search://?q=1#frag", expected: null },
  { template: "search://{?q,lang}", uri: "search:/?q=1", expected: null },
  { template: "search://{?q}{&page}", uri: "search://?page=2&q=x", expected: { q: "x", page: "2" } },
  // an exploded query variable: a record of every key no other variable or literal pair claims
  {
    template: "shop://items{?sort,filters*}",
    uri: "shop://items?color=red&sort=asc&size=L",
    expected: { sort: "asc", filters: { color: "red", size: "L" } },
  },
  { template: "shop://items{?sort,filters*}", uri: "shop://items?sort=asc", expected: { sort: "asc" } },
  {
    template: "shop://items{?sort,filters*}",
    uri: "shop://items?a%20b=%C3%A9&a%20b=2&=x&flag",
    expected: { filters: { "a b": ["é", "2"], "": "x", flag: "" } },
  },
  // a repeated key is the list of its values (what {?tags*} writes for a list)
  { template: "tags://{?tags*}", uri: "tags://?tags=a&tags=b", expected: { tags: { tags: ["a", "b"] } } },
  { template: "tags://{?tags*}", uri: "tags://?tags=a", expected: { tags: { tags: "a" } } },
  {
    template: "files://x{?tag*}",
    uri: "files://x?tag=a&tag=b&tag=c%20d",
    expected: { tag: { tag: ["a", "b", "c d"] } },
  },
  { template: "tags://{?tags*}", uri: "tags://", expected: {} },
  // a query that RFC 6570 starts with "&", its {?…} variables being undefined
  { template: "search://{?q}{&page}", uri: "search://&page=2", expected: { page: "2" } },
  { template: "api://items?sort=asc{&page}", uri: "api://items?page=2&sort=asc", expected: { page: "2" } },
  { template: "api://items?sort=asc{&page}", uri: "api://items?page=2", expected: null },
  {
    template: "github://{owner}/{repo}/readme{?ref}",
    uri: "github://octo/hello/readme?ref=main",
    expected: { owner: "octo", repo: "hello", ref: "main" },
  },
  {
    template: "github://{owner}/{repo}/readme{?ref}",
    uri: "github://octo/hello/readme",
    expected: { owner: "octo", repo: "hello" },
  },
  {
    template: "github://{owner}/{repo}/readme{?ref}",
    uri: "github://octo/hello/readme/?ref=1",
    expected: null,
  },
  // prefix modifiers {var:n}: at most n characters (code points)
  { template: "cal://{year:4}/{+rest}", uri: "cal://2026/12/01", expected: { year: "2026", rest: "12/01" } },
  { template: "cal://{year:4}/{+rest}", uri: "cal://20261/12", expected: null },
  { template: "cal://{year:4}/{+rest}", uri: "cal://%F0%9D%84%9E/x", expected: { year: "𝄞", rest: "x" } },
  { template: "s://x{?q:3}", uri: "s://x?q=abc", expected: { q: "abc" } },
  { template: "s://x{?q:3}", uri: "s://x?q=abcd", expected: null },
  // a literal '?' before a path expression is text of the path, matched where it stands
  { template: "search://q?term={term}", uri: "search://q?term=mcp", expected: { term: "mcp" } },
  { template: "search://q?term={term}", uri: "search://q?lang=en&term=mcp", expected: null },
  { template: "here?ref={+path}", uri: "here?ref=/foo/bar", expected: { path: "/foo/bar" } },
  // literals are encoded as RFC 6570 says; a URI may write them either way
  { template: "café/{var}", uri: "caf%C3%A9/value", expected: { var: "value" } },
  { template: "café/{var}", uri: "café/value", expected: { var: "value" } },
  { template: "café/{var}", uri: "cafe/value", expected: null },
  { template: "x%20y/{var}", uri: "x y/value", expected: { var: "value" } },
  { template: "x%20y/{var}", uri: "x%20y/value", expected: { var: "value" } },
  // a percent-encoded variable name is the name as written
  {
    template: "/lookup{?Stra%C3%9Fe}",
    uri: "/lookup?Stra%C3%9Fe=Gr%C3%BCner",
    expected: { "Stra%C3%9Fe": "Grüner" },
  },
  // no expressions: exact string equality
  { template: "config://app", uri: "config://app", expected: {} },
  { template: "config://app", uri: "config://app/", expected: null },
  { template: "config://app", uri: "config://APP", expected: null },
] as const;

/** One row of {@link templateCases}. */
export type TemplateCase = (typeof templateCases)[number];

/**
 * Characters the read-back property tests draw values from: none that `expand` writes as it is and a
 * template could take for structure (unreserved `.-_~`, `/ , ? # & %`), and no letter the generated
 * templates use as a literal. Tests add the structural ones where an operator encodes them.
 */
export const valueUnits = [
  "Q",
  "Z",
  "0",
  "9",
  " ",
  "é",
  "日",
  "😀",
  ":",
  "@",
  "!",
  "$",
  "'",
  "(",
  ")",
  "*",
  "+",
  ";",
  "=",
];

/** `match`'s result (and a record in it) has an empty prototype; compare plain copies so that toStrictEqual checks every key. */
export const plain = (v: object | null) =>
  v === null
    ? null
    : Object.fromEntries(
        Object.entries(v).map(([k, x]) => [k, typeof x === "object" && !Array.isArray(x) ? { ...x } : x]),
      );
