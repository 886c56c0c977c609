// The names a handler destructures from its first parameter, read from its source: one table of
// function shapes, as written and as tools emit them (minified, types stripped, transpiled).
import { describe, expect, it } from "vitest";
import { destructuredNames, namesInSource } from "../../src/resources/handler-params.js";

const names = (keys: string[], rest = false, defaults: string[] = []) => ({ keys, rest, defaults });

const computed: { read: unknown } = {
  ["re" + "ad"]({ a }: any) {
    return a;
  },
} as never;

/** Real functions: what `Function.prototype.toString` gives for the shapes people write. */
const functions: [string, unknown, ReturnType<typeof names> | undefined][] = [
  ["arrow, parens", ({ owner, repo }: any) => owner + repo, names(["owner", "repo"])],
  ["async arrow", async ({ id }: any) => id, names(["id"])],
  ["arrow, one identifier, no parens", (params: any) => params, undefined],
  ["async arrow, no parens", async (params: any) => params, undefined],
  ["no parameter", () => "x", undefined],
  ["plain identifier and ctx", (params: any, ctx: any) => [params, ctx], undefined],
  ["function expression", ({ a, b }: any) => a + b, names(["a", "b"])],
  [
    "named function",
    function read({ a }: any) {
      return a;
    },
    names(["a"]),
  ],
  ["async function", async ({ a }: any) => a, names(["a"])],
  [
    "generator",
    function* ({ a }: any) {
      yield a;
    },
    names(["a"]),
  ],
  [
    "method",
    {
      read({ a }: any) {
        return a;
      },
    }.read,
    names(["a"]),
  ],
  [
    "async method",
    {
      async read({ a, b }: any) {
        return a + b;
      },
    }.read,
    names(["a", "b"]),
  ],
  [
    "quoted method",
    {
      read({ a }: any) {
        return a;
      },
    }.read,
    names(["a"]),
  ],
  ["computed method", computed.read, names(["a"])],
  ["renamed key: the key counts", ({ user_id: id }: any) => id, names(["user_id"])],
  ["quoted key", ({ "user-id": id }: any) => id, names(["user-id"])],
  [
    "defaults",
    ({ lang = "en", page = 1 }: any) => lang + page,
    names(["lang", "page"], false, ["lang", "page"]),
  ],
  [
    "default with braces in a string",
    ({ a = "}", b = "{,}" }: any) => a + b,
    names(["a", "b"], false, ["a", "b"]),
  ],
  [
    "default with a template literal",
    ({ a = `}${"{"}${`,`}`, b }: any) => a + b,
    names(["a", "b"], false, ["a"]),
  ],
  [
    "default with an object and a call",
    ({ a = { x: [1, 2], y: f({ z: 1 }) }, b }: any) => [a, b],
    names(["a", "b"], false, ["a"]),
  ],
  ["default with a regex", ({ a = /[}]\/,/g, b }: any) => [a, b], names(["a", "b"], false, ["a"])],
  ["default with division", ({ a = 4 / 2, b = 1 }: any) => [a, b], names(["a", "b"], false, ["a", "b"])],
  [
    "default with an arrow",
    ({ a = (x: number) => ({ x }), b }: any) => [a, b],
    names(["a", "b"], false, ["a"]),
  ],
  ["nested pattern", ({ a: { b, c }, d }: any) => [b, c, d], names(["a", "d"])],
  [
    "nested pattern with a default",
    ({ a: { b } = { b: 1 }, d }: any) => [b, d],
    names(["a", "d"], false, ["a"]),
  ],
  ["rest", ({ a, ...rest }: any) => [a, rest], names(["a"], true)],
  ["whole default", ({ a }: any = {}) => a, names(["a"])],
  // biome-ignore lint/correctness/noEmptyPattern: the case
  ["empty pattern", ({}: any) => 1, names([])],
  ["array pattern", ([a]: any) => a, undefined],
  // biome-ignore format: the comments are the case
  ["comments", (/* the params */ { /* first */ a, // b is next
      b /* , c */ }: any) => a + b, names(["a", "b"])],
  ["bound function", (({ a }: any) => a).bind(null), undefined],
  ["native function", Math.max, undefined],
  ["class", class X {}, undefined],
  ["not a function", "({ a }) => a", undefined],
];

/** Source text as other tools emit it. */
const sources: [string, string, ReturnType<typeof names> | undefined][] = [
  ["minified arrow", "({owner:e,repo:t})=>e+t", names(["owner", "repo"])],
  ["minified async", 'async({id:e="1"},t)=>e', names(["id"], false, ["id"])],
  ["minified function", "function(e){return e.id}", undefined],
  [
    "types stripped (blanked)",
    "({ owner, repo }                                ) => owner",
    names(["owner", "repo"]),
  ],
  ["transpiled to ES5", "function (_a) { var owner = _a.owner; return owner; }", undefined],
  [
    "TS async helper",
    "(_a) => __awaiter(void 0, [_a], void 0, function* ({ id }) { return id; })",
    undefined,
  ],
  ["unicode names", "({ café, $x, _y }) => 1", names(["café", "$x", "_y"])],
  ["numeric key", "({ 0: first }) => first", names(["0"])],
  ["computed key", "({ [key]: v }) => v", undefined],
  ["escaped key", "({ \\u0061 }) => a", undefined],
  ["unterminated", '({ a = "oops', undefined],
  ["getter", "get x() { return 1 }", undefined],
  ["escapes in a default's string", '({ a = "x\\n}\\"", b }) => a', names(["a", "b"], false, ["a"])],
  ["lost its way: a pattern followed by nonsense", "({ a } b) => a", undefined],
  ["a second parameter and a whole default", "({ a }, ctx) => a", names(["a"])],
  ["a pattern in the second place only", "(uri, { id }) => id", undefined],
  [
    "regex after return in default",
    "({ a = (() => { return /}/ })(), b }) => a",
    names(["a", "b"], false, ["a"]),
  ],
  ["renamed key with a default", "({ v: version = 'latest', id }) => id", names(["v", "id"], false, ["v"])],
];

describe("destructuredNames", () => {
  it.each(functions)("%s", (_, fn, expected) => {
    expect(destructuredNames(fn)).toEqual(expected);
  });
  it.each(sources)("%s", (_, source, expected) => {
    expect(namesInSource(source)).toEqual(expected);
  });
});

function f(x: unknown) {
  return x;
}
