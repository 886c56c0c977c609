/**
 * Type tests for `UriParams`, checked by `tsc --noEmit` (and harmlessly run by vitest). The shared case
 * table is walked at type level: every row's `expected` must have exactly the shape `UriParams` gives.
 */
import { describe, expectTypeOf, it } from "vitest";
import type { LooseUriParams, UriParams, UriVariableName } from "../../src/resources/params.js";
import type { templateCases } from "../template-cases.js";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

type RequiredKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T];
/** A row's `expected` as `match` types it: readonly literals widened to `string` / `string[]` / a record. */
type Widen<E> = {
  -readonly [K in keyof E]: E[K] extends string
    ? string
    : E[K] extends readonly unknown[]
      ? string[]
      : Record<string, string | string[]>;
};
/** `expected` fits `UriParams<T>`: same names, right types, every required name present, not the loose fallback. */
type Fits<T extends string, E> = E extends null
  ? true
  : string extends keyof UriParams<T>
    ? false
    : [Widen<E>] extends [UriParams<T>]
      ? [keyof E] extends [keyof UriParams<T>]
        ? [RequiredKeys<UriParams<T>>] extends [keyof E]
          ? true
          : false
        : false
      : false;

type Cases = typeof templateCases;
/** `true` for each row that fits, the row itself for one that does not (so a failure names it). */
type Walked = {
  [I in keyof Cases]: Cases[I] extends { template: infer T extends string; expected: infer E }
    ? Fits<T, E> extends true
      ? true
      : Cases[I]
    : never;
};

describe("UriParams, walking the shared case table", () => {
  it("gives every row's expected result its exact shape", () => {
    expectTypeOf<Walked[number]>().toEqualTypeOf<true>();
  });
});

describe("UriParams", () => {
  it("infers path variables as string", () => {
    expectTypeOf<UriParams<"github://{owner}/{repo}/readme">>().toEqualTypeOf<{
      owner: string;
      repo: string;
    }>();
  });

  it("infers query variables as optional strings", () => {
    expectTypeOf<UriParams<"github://{owner}/{repo}/readme{?ref}">>().toEqualTypeOf<{
      owner: string;
      repo: string;
      ref?: string;
    }>();
    expectTypeOf<UriParams<"search://{?q,lang}{&page}">>().toEqualTypeOf<{
      q?: string;
      lang?: string;
      page?: string;
    }>();
  });

  it("infers exploded path variables as string[], an exploded query variable as an optional record", () => {
    expectTypeOf<UriParams<"files://root{/segs*}{?sort,filters*}">>().toEqualTypeOf<{
      segs: string[];
      sort?: string;
      filters?: Record<string, string | string[]>;
    }>();
    // a key the URI repeats (`?tag=a&tag=b`) is the list of its values
    expectTypeOf<UriParams<"files://x{?tag*}">>().toEqualTypeOf<{
      tag?: Record<string, string | string[]>;
    }>();
    const first = (p: UriParams<"files://x{?tag*}">) => {
      // @ts-expect-error a repeated key may be a list: not a plain string
      const one: string = p.tag!.tag!;
      return one;
    };
    void first;
    expectTypeOf<UriParams<"m://x{;list*}{.ext*}">>().toEqualTypeOf<{ list: string[]; ext: string[] }>();
  });

  it("gives each name of a comma list, with every operator; optional where match may leave it out", () => {
    expectTypeOf<UriParams<"x://{a,b}{+c,d}{#e}{.f}{/g}{;h}">>().toEqualTypeOf<{
      a: string;
      b?: string;
      c: string;
      d?: string;
      e?: string;
      f?: string;
      g?: string;
      h?: string;
    }>();
  });

  it("makes optional each variable behind a lead, as the RFC 6570 suite's undefined ones", () => {
    expectTypeOf<UriParams<"{/var,undef}">>().toEqualTypeOf<{ var?: string; undef?: string }>();
    expectTypeOf<UriParams<"{;x,y,undef}">>().toEqualTypeOf<{ x?: string; y?: string; undef?: string }>();
    expectTypeOf<UriParams<"?{x,undef}">>().toEqualTypeOf<{ x: string; undef?: string }>();
    expectTypeOf<UriParams<"X{.undef}">>().toEqualTypeOf<{ undef?: string }>();
    expectTypeOf<UriParams<"foo{#undef}">>().toEqualTypeOf<{ undef?: string }>();
    // {x} and {+x} read "" for undefined, as RFC 6570 writes both as nothing; exploded path lists read []
    expectTypeOf<UriParams<"O{undef}X{+r}">>().toEqualTypeOf<{ undef: string; r: string }>();
    expectTypeOf<UriParams<"x{/segs*}{.e:3}">>().toEqualTypeOf<{ segs: string[]; e?: string }>();
    const ext = (p: UriParams<"file://{name}{.ext}">) => {
      // @ts-expect-error ext may be absent (file://readme)
      const e: string = p.ext;
      return e + p.name.length;
    };
    void ext;
  });

  it("infers a prefix modifier as a string, optional in the query", () => {
    expectTypeOf<UriParams<"cal://{year:4}/{+rest:100}{?q:3}">>().toEqualTypeOf<{
      year: string;
      rest: string;
      q?: string;
    }>();
  });

  it("keeps a percent-encoded name as written, and a literal '?' does not make a path variable optional", () => {
    expectTypeOf<UriParams<"/lookup{?Stra%C3%9Fe}">>().toEqualTypeOf<{ "Stra%C3%9Fe"?: string }>();
    expectTypeOf<UriParams<"search://q?term={term}">>().toEqualTypeOf<{ term: string }>();
  });

  it("gives {} for a template without variables", () => {
    expectTypeOf<UriParams<"config://app">>().toEqualTypeOf<{}>();
    expectTypeOf<UriParams<"config://app">>().toEqualTypeOf<Record<never, never>>();
  });

  it("falls back to a loose record for a non-literal string", () => {
    expectTypeOf<UriParams<string>>().toEqualTypeOf<LooseUriParams>();
    expectTypeOf<UriParams<string>>().toEqualTypeOf<
      Record<string, string | string[] | Record<string, string | string[]> | undefined>
    >();
  });

  it("flattens the result into one object type", () => {
    type P = UriParams<"a://{x}/{y}{?z}">;
    // an intersection would not be equal to its own mapped copy under this (strict) Equal
    const flat: Equal<P, { [K in keyof P]: P[K] }> = true;
    expectTypeOf(flat).toEqualTypeOf<true>();
  });

  it("names the variables with UriVariableName", () => {
    expectTypeOf<UriVariableName<"github://{owner}/{repo}/readme{?ref,tags*}">>().toEqualTypeOf<
      "owner" | "repo" | "ref" | "tags"
    >();
    expectTypeOf<UriVariableName<"config://app">>().toEqualTypeOf<never>();
    expectTypeOf<UriVariableName<string>>().toEqualTypeOf<string>();
  });

  it("handles a template with many expressions", () => {
    type Long =
      UriParams<"x://{a0}/{a1}/{a2}/{a3}/{a4}/{a5}/{a6}/{a7}/{a8}/{a9}/{b0}/{b1}/{b2}/{b3}/{b4}/{b5}/{b6}/{b7}/{b8}/{b9}/{c0}/{c1}/{c2}/{c3}/{c4}/{c5}/{c6}/{c7}/{c8}/{c9}{?d0,d1}">;
    expectTypeOf<Long["c9"]>().toEqualTypeOf<string>();
    expectTypeOf<Long["d1"]>().toEqualTypeOf<string | undefined>();
  });

  it("rejects misuse", () => {
    const readme = { owner: "octo", repo: "hello" } as UriParams<"github://{owner}/{repo}/readme{?ref}">;
    // @ts-expect-error: no {branch} in this template
    readme.branch;
    expectTypeOf(readme.ref).toEqualTypeOf<string | undefined>();

    // @ts-expect-error: a simple variable is a string, not a string[]
    const list: UriParams<"users://{id}"> = { id: ["1"] };
    // @ts-expect-error: an exploded variable is a string[], not a string
    const one: UriParams<"files://root{/segs*}"> = { segs: "a" };
    // @ts-expect-error: path variables are required
    const missing: UriParams<"users://{id}"> = {};
    // @ts-expect-error: an optional query variable is absent, never explicitly undefined
    const undef: UriParams<"search://{?q}"> = { q: undefined };
    // @ts-expect-error: an unknown name is an excess property
    const extra: UriParams<"users://{id}"> = { id: "1", name: "x" };
    // @ts-expect-error: `complete` keys are variable names only
    const key: UriVariableName<"users://{id}"> = "name";
    // @ts-expect-error: a prefix is a string, not a list
    const cut: UriParams<"cal://{year:4}"> = { year: ["2026"] };
    // @ts-expect-error: an exploded query variable is a record, not a list
    const rec: UriParams<"shop://{?filters*}"> = { filters: ["a"] };
    // @ts-expect-error: a record's values are strings
    const deep: UriParams<"shop://{?filters*}"> = { filters: { color: 1 } };
    expectTypeOf([list, one, missing, undef, extra, key, cut, rec, deep]).toBeArray();
  });
});
