/**
 * RFC 6570 URI templates (levels 1–3 and explode), parsed once and compiled to a scanner that
 * matches in time linear in the URI and never backtracks.
 *
 * How a URI is cut (the whole matching contract):
 * - A template is split into a path part, a query part (from the first `{?…}`, `{&…}` or literal `?`)
 *   and a fragment part (from the first `{#…}` or literal `#`). The URI is split the same way, but only
 *   at the delimiters the template declares: with a query part the URI's query starts at its first `?`;
 *   with a query or fragment part its fragment starts at its first `#` (and a fragment the template
 *   does not declare means no match). A template with neither takes `?` and `#` as ordinary text, so
 *   `files://{+path}` matches `files://a?b#c` with `path = "a?b#c"`.
 * - In the path, and in the fragment, at most one variable may have a variable structure: `{+x}`,
 *   `{#x}` (in `{+a,b}` only the last; the others end at the first `,`) or an exploded `{x*}`. It is
 *   the pivot (without one, the last variable is). Literals and variables before the pivot are matched
 *   from the left, each variable ending at the FIRST occurrence of the literal after it; those after
 *   it from the right, each starting after the LAST occurrence of the literal before it; the pivot
 *   takes what is left. So `{+dir}/{name}` splits at the last `/`, `notes://{name}.txt` matches
 *   `notes://my.notes.txt`, and `{a}.{b}` reads `x.y.z` as `x` and `y.z`.
 * - Two variables need a literal between them, or a prefix operator (`{a}{/b}`, `{a}{.b}`).
 * - `{x}` (and `{.x}`, `{/x}`, `{;x}`) never match a raw `/`, `?`, `#` or `,` (`{;x}` not `;` either);
 *   `{x}` and `{+x}` never match an empty value. Exploded variables give `string[]` (`[]` when absent).
 * - Query variables are optional, matched in any order; unknown keys are ignored; keys are compared
 *   as written (not decoded); for a repeated key the first wins, except exploded `{?x*}`, which
 *   collects every occurrence. Literal pairs in the template (`?type=repo{&q}`) must be present.
 *   `+` is a plus, not a space (RFC 3986; `application/x-www-form-urlencoded` does not apply).
 * - Values are percent-decoded exactly once, after the structure has matched.
 *
 * `expand` is the exact inverse of `match`: it percent-encodes whatever would otherwise be read back
 * differently (always `%`; the first character of the literal that ends a value, e.g. `.` in `{a}.{b}`).
 * That is stricter than RFC 6570, whose reserved expansion passes `%XX` through, and it always writes a
 * well-formed query (`?` then `&`). Exploded query variables are lists (`?x=a&x=b`), not key/value maps.
 * Prefix modifiers (`{x:3}`, level 4) are rejected: a truncated value cannot be matched back.
 *
 * This file: the public types, limits, and splitting a template into literals and expressions.
 * `uri-template-compile.ts` turns those into a scanner, `uri-template-scan.ts` runs it (`match`, `expand`),
 * `percent.ts` encodes and decodes.
 */
import { charTable } from "./percent.js";
import { compileScanner, type Expr, fail, type UriOperator } from "./template-compile.js";
import { expandUri, matchUri, type Scanner, type UriExpandValues, type UriValues } from "./template-scan.js";

export type { UriOperator } from "./template-compile.js";
export { UriTemplateError } from "./template-compile.js";
export type { UriExpandValues, UriValues } from "./template-scan.js";

/** Limits applied by {@link parseUriTemplate}; every field is optional. */
export interface UriTemplateLimits {
  /** Longest template accepted, in UTF-16 code units; longer throws at registration. Default 1024. */
  readonly maxTemplateLength?: number;
  /** Longest URI `match` looks at; a longer URI does not match (`match` returns null). Default 8192. */
  readonly maxUriLength?: number;
  /** Most variables in one template; more throws at registration. Default 32. */
  readonly maxVariables?: number;
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
  /** Written with `*`: its value is a `string[]`. */
  readonly explode: boolean;
  /** In `{?…}` or `{&…}`: optional, matched in any order. */
  readonly query: boolean;
}

/** A parsed template. */
export interface UriTemplate {
  /** The template as written. */
  readonly template: string;
  /** Its variables in order of appearance. */
  readonly variables: readonly UriVariable[];
  /** Text every matching URI starts with: the literal before the first expression, cut at a literal `?`. */
  readonly literalPrefix: string;
  /** Has at least one expression; without one, `match` is exact string equality. */
  readonly isTemplate: boolean;
  /** The decoded variables of `uri`, or null; throws `McpError(InvalidParams)` on a malformed `%` escape. */
  match(uri: string): UriValues | null;
  /** The URI for `values`; throws `TypeError` for a missing path variable or ill-formed Unicode. */
  expand(values: UriExpandValues): string;
}

/**
 * Parses and compiles a template once; throws {@link UriTemplateError} if it cannot be matched unambiguously.
 * @example
 * const t = parseUriTemplate("github://{owner}/{repo}/readme{?ref}");
 * t.match("github://octo/hello/readme?ref=main"); // { owner: "octo", repo: "hello", ref: "main" }
 * t.expand({ owner: "octo", repo: "hello" }); // "github://octo/hello/readme"
 */
export function parseUriTemplate(template: string, limits: UriTemplateLimits = {}): UriTemplate {
  if (typeof template !== "string") throw new TypeError("parseUriTemplate: the template must be a string");
  const max = { ...defaultUriTemplateLimits, ...limits };
  if (template.length > max.maxTemplateLength) {
    fail(
      template,
      max.maxTemplateLength,
      `longer than ${max.maxTemplateLength} characters`,
      "Shorten it, or raise maxTemplateLength.",
    );
  }
  return new CompiledUriTemplate(template, lex(template, max.maxVariables), max.maxUriLength);
}

const NAME_CHARS = charTable("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.");

/** Splits the template into literals and expressions, validating names, operators and braces. */
function lex(t: string, maxVariables: number): (string | Expr)[] {
  const parts: (string | Expr)[] = [];
  const seen = new Set<string>();
  let i = 0;
  let litStart = 0;
  while (i < t.length) {
    const c = t[i];
    if (c === "}") fail(t, i, "a '}' without an opening '{'", "Remove it, or add the missing '{'.");
    if (c !== "{") {
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
      const v = varSpec(t, s, e);
      if (seen.has(v.name))
        fail(t, s, `the variable '${v.name}' appears twice`, "Give each variable its own name.");
      seen.add(v.name);
      if (seen.size > maxVariables)
        fail(t, s, `more than ${maxVariables} variables`, "Use fewer, or raise maxVariables.");
      expr.vars.push(v);
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

function varSpec(t: string, s: number, e: number): { name: string; explode: boolean; at: number } {
  if (s === e) fail(t, s, "an empty variable name", "Name the variable, or remove the extra ','.");
  const explode = t.charCodeAt(e - 1) === 42; // *
  const end = explode ? e - 1 : e;
  for (let i = s; i < end; i++) {
    const c = t.charCodeAt(i);
    if (c < 128 && NAME_CHARS[c]) continue;
    if (c === 58)
      fail(
        t,
        i,
        "prefix modifiers like {name:3} are not supported",
        "A cut value cannot be matched back; remove the ':…'.",
      );
    if (c === 37)
      fail(t, i, "percent-encoded variable names are not supported", "Use letters, digits, '_' and '.'.");
    fail(t, i, `'${t[i]}' is not allowed in a variable name`, "Use letters, digits, '_' and '.'.");
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
  return { name, explode, at: s };
}

/** The parsed template; `match` and `expand` run its scanner. */
class CompiledUriTemplate implements UriTemplate {
  readonly template: string;
  readonly variables: readonly UriVariable[];
  readonly literalPrefix: string;
  readonly isTemplate: boolean;
  readonly #scanner: Scanner;

  constructor(template: string, parts: (string | Expr)[], maxUriLength: number) {
    this.template = template;
    const first = parts[0];
    this.isTemplate = parts.some((p) => typeof p !== "string");
    const lead = typeof first === "string" ? first : "";
    this.literalPrefix = this.isTemplate && lead.includes("?") ? lead.slice(0, lead.indexOf("?")) : lead;
    const variables: UriVariable[] = [];
    for (const p of parts) {
      if (typeof p === "string") continue;
      for (const v of p.vars)
        variables.push({
          name: v.name,
          operator: p.op,
          explode: v.explode,
          query: p.op === "?" || p.op === "&",
        });
    }
    this.variables = variables;
    this.#scanner = compileScanner(template, parts, this.isTemplate, maxUriLength);
  }

  match(uri: string): UriValues | null {
    return matchUri(this.#scanner, uri);
  }

  expand(values: UriExpandValues): string {
    return expandUri(this.#scanner, values);
  }
}
