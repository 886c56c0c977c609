/**
 * RFC 6570 URI templates, all four levels: `expand` writes exactly what the RFC says (`template-expand.ts`);
 * `match` runs a scanner compiled once, linear in the URI, that never backtracks.
 *
 * How a URI is cut (the whole matching contract):
 * - A template is split into a path part, a query part (from the first `{?…}`/`{&…}`, or a literal `?`
 *   that no path expression follows) and a fragment part (from the first `{#…}` or literal `#`). The URI
 *   is split the same way, but only at the delimiters the template declares: with a query part the URI's
 *   query starts at its first `?` (or, when the query starts with `{?…}` and goes on, at its first `&`
 *   if it has no `?`: the RFC writes `&` when the `{?…}` variables are undefined); with a query or
 *   fragment part its fragment starts at its first `#` (and a fragment the template does not declare
 *   means no match). A template with neither takes `?` and `#` as ordinary text, so `files://{+path}`
 *   matches `files://a?b#c` with `path = "a?b#c"`, and `search://q?term={term}` has `?` in its path.
 * - In the path, and in the fragment, at most one variable may have a variable structure: `{+x}`,
 *   `{#x}` (in `{+a,b}` only the last; the others end at the first `,`) or an exploded `{x*}`. It is
 *   the pivot (without one, the last variable is). Literals and variables before the pivot are matched
 *   from the left, each variable ending at the FIRST occurrence of the literal after it; those after
 *   it from the right, each starting after the LAST occurrence of the literal before it; the pivot
 *   takes what is left. So `{+dir}/{name}` splits at the last `/`, `notes://{name}.txt` matches
 *   `notes://my.notes.txt`, and `{a}.{b}` reads `x.y.z` as `x` and `y.z`.
 * - Two variables need a literal between them, or a prefix operator (`{a}{/b}`, `{a}{.b}`); a name is
 *   used once. A variable with a lead that an empty value still writes (`/`, `.`, `#`, `;x`, and the
 *   `,` before each but the first of `{x,y}`) may be absent: RFC 6570 drops it when undefined, lead
 *   and all, so where the URI lacks the lead it is left out (`{/var,undef}` on `/value`, `X{.undef}` on
 *   `X`). Unnamed values fill their variables from the left; one before a literal is present only if
 *   that literal still follows its lead (`/base{/a}/pages` on `/base/pages`). `{x}` and `{+x}` are
 *   always there, and read `""` for nothing (`O{x}X` matches `OX`).
 * - `{x}` (and `{.x}`, `{/x}`, `{;x}`) never match a raw `/`, `?` or `#` (`{;x}` not `;` either); a raw
 *   `,` is kept: a list without explode writes one, and `read` gets the joined string. Exploded path
 *   variables give `string[]` (`[]` when absent). A prefix `{x:n}` matches at most n code points.
 * - Query variables are optional, matched in any order; unknown keys are ignored; keys are compared
 *   as written (not decoded); for a repeated key the first wins. One exploded query variable `{?x*}`
 *   collects every pair no other variable or literal pair claims, as a record (keys decoded), where a
 *   repeated key is the list of its values (`{?tag*}` on `?tag=a&tag=b`: `{ tag: ["a", "b"] }`).
 *   Literal pairs in the template (`?type=repo{&q}`) must be present. `+` is a plus, not a space
 *   (RFC 3986; `application/x-www-form-urlencoded` does not apply).
 * - Literals are matched encoded, as `expand` writes them; a URI with characters a URI cannot hold
 *   (`é`, a space) is encoded the same way first, when the template has such a literal.
 * - Values are percent-decoded exactly once, after the structure has matched.
 *
 * `match(expand(v))` is `v` wherever the URI determines it; docs/resources.md lists where it does not
 * (lists and maps without explode, prefixes, `%XX` in `{+x}`, a value holding the literal that ends it,
 * an undefined variable before a defined one in an unnamed expression, an undefined `{#…}` before a literal).
 *
 * This file: the public types, limits, and splitting a template into literals and expressions.
 * `template-layout.ts` and `template-compile.ts` turn those into a scanner, `template-scan.ts` runs it,
 * `template-expand.ts` expands, `percent.ts` encodes and decodes.
 */
import type { UriTemplateLimits } from "../registry.js";
import { charTable, encodeUriText, isTriplet } from "./percent.js";
import { compileScanner } from "./template-compile.js";
import { type Expr, fail, type UriOperator, UriTemplateError } from "./template-error.js";
import { expandParts, type UriExpandValues } from "./template-expand.js";
import { matchUri, type Scanner, type UriValues } from "./template-scan.js";

export type { UriOperator } from "./template-error.js";
export { UriTemplateError } from "./template-error.js";
export type { UriExpandValue, UriExpandValues, UriScalar } from "./template-expand.js";
export type { UriValues } from "./template-scan.js";
// the limits are a server option (`uriTemplateLimits`), declared with the others
export type { UriTemplateLimits };

/** Options of {@link parseUriTemplate}: the limits, and whether a template only has to expand. */
export interface UriTemplateOptions extends UriTemplateLimits {
  /**
   * Accept any RFC 6570 template, also one that `match` cannot read back (`{a}{b}`, a repeated name,
   * `{/list*,x}`); `match` of such a template throws its {@link UriTemplateError}. Default false.
   */
  readonly expandOnly?: boolean;
}

/** The limits used when an option is not given. */
export const defaultUriTemplateLimits: Readonly<Required<UriTemplateLimits>> = Object.freeze({
  maxTemplateLength: 1024,
  maxUriLength: 8192,
  maxVariables: 32,
});

/** One variable of a template. */
export interface UriVariable {
  /** The name, as written. */
  readonly name: string;
  /** The operator of its expression. */
  readonly operator: UriOperator;
  /** Written with `*`. */
  readonly explode: boolean;
  /** The `n` of a prefix modifier `{name:n}`; 0 without one. */
  readonly prefix: number;
  /** In `{?…}` or `{&…}`: optional, matched in any order. */
  readonly query: boolean;
}

/** A parsed template. */
export interface UriTemplate {
  /** The template as written. */
  readonly template: string;
  /** Its variables in order of appearance. */
  readonly variables: readonly UriVariable[];
  /** Text every matching URI starts with: the literal before the first expression (encoded), cut where the query starts. */
  readonly literalPrefix: string;
  /** Has at least one expression; without one, `match` is exact string equality. */
  readonly isTemplate: boolean;
  /** The decoded variables of `uri`, or null; throws `McpError(InvalidParams)` on a malformed `%` escape. */
  match(uri: string): UriValues | null;
  /** The URI for `values`, by RFC 6570; throws `TypeError` for a value of no RFC 6570 type or ill-formed Unicode. */
  expand(values: UriExpandValues): string;
}

/**
 * Parses and compiles a template once; throws {@link UriTemplateError} if it cannot be matched unambiguously.
 * @example
 * const t = parseUriTemplate("github://{owner}/{repo}/readme{?ref}");
 * t.match("github://octo/hello/readme?ref=main"); // { owner: "octo", repo: "hello", ref: "main" }
 * t.expand({ owner: "octo", repo: "hello" }); // "github://octo/hello/readme"
 */
export function parseUriTemplate(template: string, options: UriTemplateOptions = {}): UriTemplate {
  if (typeof template !== "string") throw new TypeError("parseUriTemplate: the template must be a string");
  const max = { ...defaultUriTemplateLimits, ...options };
  if (template.length > max.maxTemplateLength) {
    fail(
      template,
      max.maxTemplateLength,
      `longer than ${max.maxTemplateLength} characters`,
      "Shorten it, or raise maxTemplateLength.",
    );
  }
  const parts = lex(template, max.maxVariables);
  return new CompiledUriTemplate(template, parts, max.maxUriLength, options.expandOnly === true);
}

const NAME_CHARS = charTable("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.");

/** Splits the template into literals and expressions, validating names, operators, modifiers and braces. */
function lex(t: string, maxVariables: number): (string | Expr)[] {
  const parts: (string | Expr)[] = [];
  let count = 0;
  let i = 0;
  let litStart = 0;
  while (i < t.length) {
    const c = t[i];
    if (c === "}") fail(t, i, "a '}' without an opening '{'", "Remove it, or add the missing '{'.");
    if (c !== "{") {
      checkLiteral(t, i);
      i++;
      continue;
    }
    if (i > litStart) parts.push(t.slice(litStart, i));
    const close = t.indexOf("}", i + 1);
    const reopen = t.indexOf("{", i + 1);
    if (close < 0 || (reopen >= 0 && reopen < close))
      fail(t, i, "this '{' is never closed", "Add the missing '}'.");
    if (close === i + 1)
      fail(t, i, "an empty expression '{}'", "Put a variable name inside, for example {id}.");
    let op = t[i + 1]!;
    let s = i + 2;
    if ("=,!@|".includes(op)) {
      fail(
        t,
        i + 1,
        `the operator '${op}' is reserved by RFC 6570`,
        "Use one of + # . / ; ? & or no operator.",
      );
    }
    if (!"+#./;?&".includes(op)) {
      op = "";
      s = i + 1;
    }
    const expr: Expr = { op: op as UriOperator, vars: [], at: i, end: close + 1 };
    for (;;) {
      let e = t.indexOf(",", s);
      if (e < 0 || e > close) e = close;
      expr.vars.push(varSpec(t, s, e));
      if (++count > maxVariables)
        fail(t, s, `more than ${maxVariables} variables`, "Use fewer, or raise maxVariables.");
      if (e === close) break;
      s = e + 1;
    }
    parts.push(expr);
    i = close + 1;
    litStart = i;
  }
  if (litStart < t.length) parts.push(t.slice(litStart));
  return parts;
}

/** A literal may hold any character but a stray `%` or a lone surrogate; the rest is encoded (RFC 6570 §3.1). */
function checkLiteral(t: string, i: number): void {
  const c = t.charCodeAt(i);
  if (c === 37 && !isTriplet(t, i))
    fail(t, i, "a '%' that does not start a %XX escape", "Write a literal percent sign as %25.");
  const pair = c <= 0xdbff ? t.charCodeAt(i + 1) : t.charCodeAt(i - 1);
  const lone = c <= 0xdbff ? pair < 0xdc00 || pair > 0xdfff : pair < 0xd800 || pair > 0xdbff;
  if (c >= 0xd800 && c <= 0xdfff && lone) fail(t, i, "a lone surrogate", "Use well-formed Unicode.");
}

function varSpec(t: string, s: number, e: number): Expr["vars"][number] {
  if (s === e) fail(t, s, "an empty variable name", "Name the variable, or remove the extra ','.");
  let end = e;
  let explode = false;
  let prefix = 0;
  const colon = t.indexOf(":", s);
  if (t.charCodeAt(e - 1) === 42) {
    explode = true;
    end = e - 1;
  } else if (colon >= 0 && colon < e) {
    const digits = t.slice(colon + 1, e);
    if (!/^[1-9][0-9]{0,3}$/.test(digits)) {
      fail(
        t,
        colon + 1,
        `'${digits}' is not a prefix length`,
        "Write {name:n} with n from 1 to 9999, without leading zeros (and without '*').",
      );
    }
    prefix = Number(digits);
    end = colon;
  }
  for (let i = s; i < end; i++) {
    const c = t.charCodeAt(i);
    if (c < 128 && NAME_CHARS[c]) continue;
    if (isTriplet(t, i)) {
      i += 2;
      continue;
    }
    if (c === 37) fail(t, i, "a '%' in a variable name that is not a %XX escape", "Write it as %XX.");
    fail(
      t,
      i,
      `'${t[i]}' is not allowed in a variable name`,
      "Use letters, digits, '_', '.' and %XX escapes.",
    );
  }
  const name = t.slice(s, end);
  if (name === "" || name.startsWith(".") || name.endsWith(".") || name.includes("..")) {
    fail(
      t,
      s,
      `'${name}' is not a variable name`,
      "Use letters, digits and '_', with single dots between them.",
    );
  }
  return { name, explode, prefix, at: s };
}

/** The parsed template; `match` runs its scanner, `expand` its parts. */
class CompiledUriTemplate implements UriTemplate {
  readonly template: string;
  readonly variables: readonly UriVariable[];
  readonly literalPrefix: string;
  readonly isTemplate: boolean;
  readonly #scanner: Scanner | UriTemplateError;
  /** The parts with literals encoded, for `expand`. */
  readonly #parts: readonly (string | Expr)[];

  constructor(template: string, parts: (string | Expr)[], maxUriLength: number, expandOnly: boolean) {
    this.template = template;
    this.isTemplate = parts.some((p) => typeof p !== "string");
    const variables: UriVariable[] = [];
    for (const p of parts) {
      if (typeof p === "string") continue;
      for (const v of p.vars)
        variables.push({
          name: v.name,
          operator: p.op,
          explode: v.explode,
          prefix: v.prefix,
          query: p.op === "?" || p.op === "&",
        });
    }
    this.variables = variables;
    this.#parts = this.isTemplate ? parts.map((p) => (typeof p === "string" ? encodeUriText(p)! : p)) : parts;
    let scanner: Scanner | UriTemplateError;
    try {
      scanner = compileScanner(template, parts, this.isTemplate, maxUriLength);
    } catch (e) {
      if (!expandOnly || !(e instanceof UriTemplateError)) throw e;
      scanner = e;
    }
    this.#scanner = scanner;
    const lead = this.#parts[0];
    this.literalPrefix = !this.isTemplate
      ? template
      : scanner instanceof UriTemplateError
        ? typeof lead === "string"
          ? lead
          : ""
        : scanner.literalPrefix;
  }

  match(uri: string): UriValues | null {
    const s = this.#scanner;
    if (s instanceof UriTemplateError) throw s;
    return matchUri(s, uri);
  }

  expand(values: UriExpandValues): string {
    return this.isTemplate ? expandParts(this.#parts, values) : this.template;
  }
}
