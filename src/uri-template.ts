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
 * - In the path and fragment parts, at most one variable may span a variable structure (`{+x}`,
 *   `{#x}` or any exploded `{x*}`); it is the pivot (without one, the last variable is). Literals and
 *   variables before the pivot are matched from the left, each variable ending at the FIRST occurrence
 *   of the literal after it; those after the pivot are matched from the right, each starting after the
 *   LAST occurrence of the literal before it; the pivot takes what is left. So `{+dir}/{name}` splits
 *   at the last `/` and `notes://{name}.txt` matches `notes://my.notes.txt`.
 * - `{x}` (and `{.x}`, `{/x}`, `{;x}`) never match a raw `/`, `?`, `#` or `,` (`{;x}` not `;` either);
 *   `{x}` and `{+x}` never match an empty value.
 * - Query variables are optional, matched in any order; unknown keys are ignored; keys are compared
 *   as written (not decoded); for a repeated key the first wins, except exploded `{?x*}`, which
 *   collects every occurrence. Literal pairs in the template (`?type=repo{&q}`) must be present.
 *   `+` is a plus, not a space (RFC 3986; `application/x-www-form-urlencoded` does not apply).
 * - Values are percent-decoded exactly once, after the structure has matched.
 *
 * `expand` is the exact inverse of `match`: it percent-encodes whatever would otherwise be read back
 * differently (always `%`; in `{+x}` the delimiter that ends it). That is stricter than RFC 6570,
 * whose reserved expansion passes `%XX` through, and it always writes a well-formed query (`?` then `&`).
 * Prefix modifiers (`{x:3}`, level 4) are rejected: a truncated value cannot be matched back.
 */
import { ErrorCode, McpError } from "./errors.js";

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

/** An RFC 6570 operator; `""` is simple string expansion. */
export type UriOperator = "" | "+" | "#" | "." | "/" | ";" | "?" | "&";

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

/** What `match` returns: a null-prototype object, exploded variables as arrays, absent query keys omitted. */
export type UriValues = Record<string, string | string[]>;

/** What `expand` takes: path variables are required, query variables may be missing. */
export type UriExpandValues = Readonly<Record<string, string | readonly string[] | undefined>>;

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

/** A template that cannot be used; thrown at registration, with a caret under the offending place. */
export class UriTemplateError extends Error {
  /** The template as given. */
  readonly template: string;
  /** Index in `template` of the offending place. */
  readonly index: number;

  constructor(template: string, index: number, reason: string, hint: string) {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we replace
    const shown = template.replace(/[\u0000-\u001f\u007f]/g, "?");
    const column = Array.from(template.slice(0, index)).length;
    super(`Invalid URI template: ${reason}\n  ${shown}\n  ${" ".repeat(column)}^\n${hint}`);
    this.name = "UriTemplateError";
    this.template = template;
    this.index = index;
  }
}

interface OpInfo {
  readonly first: string;
  readonly sep: string;
  readonly named: boolean;
  readonly reserved: boolean;
}

const OPS: Record<UriOperator, OpInfo> = {
  "": { first: "", sep: ",", named: false, reserved: false },
  "+": { first: "", sep: ",", named: false, reserved: true },
  "#": { first: "#", sep: ",", named: false, reserved: true },
  ".": { first: ".", sep: ".", named: false, reserved: false },
  "/": { first: "/", sep: "/", named: false, reserved: false },
  ";": { first: ";", sep: ";", named: true, reserved: false },
  "?": { first: "?", sep: "&", named: true, reserved: false },
  "&": { first: "&", sep: "&", named: true, reserved: false },
};

function charTable(chars: string): Uint8Array {
  const t = new Uint8Array(128);
  for (let i = 0; i < chars.length; i++) t[chars.charCodeAt(i)] = 1;
  return t;
}
const UNRESERVED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";
const RESERVED = ":/?#[]@!$&'()*+,;=";
const NAME_CHARS = charTable("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.");
/** Raw characters a value may not contain, by operator; `+` and `#` take anything. */
const FORBID: Record<string, Uint8Array | null> = {
  "": charTable("/?#,"),
  ".": charTable("/?#,"),
  "/": charTable("/?#,"),
  ";": charTable("/?#,;"),
  "+": null,
  "#": null,
};

const LIT = 0;
const SLOT = 1;
const LIST = 2;

/** One step of a compiled path or fragment part; one shape for every kind keeps the scanner monomorphic. */
interface Tok {
  kind: number;
  /** LIT: the text. SLOT/LIST: the variable name. */
  text: string;
  /** SLOT: `;` style, the value follows `=` and may be empty. LIST: items are `name=value`. */
  named: boolean;
  nonEmpty: boolean;
  /** A list, or the last `{+…}`/`{#…}` variable of its expression: must be the pivot. */
  wide: boolean;
  forbid: Uint8Array | null;
  /** Before the pivot: the literal that ends this value (first occurrence); `soft` = a list prefix that may be absent. */
  next: string;
  soft: boolean;
  /** After the pivot: the literal that starts this value (last occurrence). */
  prev: string;
  /** LIST: prefix and separator char codes (prefix -1 when none). */
  prefix: number;
  sep: number;
  /** Expansion: operator info and the ASCII characters written as they are. */
  op: OpInfo;
  keep: Uint8Array;
  at: number;
}

interface Section {
  toks: Tok[];
  pivot: number;
}

interface QueryVar {
  name: string;
  explode: boolean;
  keep: Uint8Array;
}

/** Expansion steps in template order: a literal, a path/fragment expression, a query pair or variable. */
type Step =
  | { kind: "lit"; text: string }
  | { kind: "expr"; op: OpInfo; toks: Tok[] }
  | { kind: "qpair"; text: string }
  | { kind: "qvar"; v: QueryVar };

interface Expr {
  op: UriOperator;
  vars: { name: string; explode: boolean; at: number }[];
  at: number;
  end: number;
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
  return new CompiledUriTemplate(template, scan(template, max.maxVariables), max.maxUriLength);
}

function fail(template: string, index: number, reason: string, hint: string): never {
  throw new UriTemplateError(template, index, reason, hint);
}

/** Splits the template into literals and expressions, validating names, operators and braces. */
function scan(t: string, maxVariables: number): (string | Expr)[] {
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

function keepTable(reserved: boolean, extra: string): Uint8Array {
  const t = charTable(reserved ? UNRESERVED + RESERVED : UNRESERVED);
  for (let i = 0; i < extra.length; i++) t[extra.charCodeAt(i)] = 0;
  return t;
}

function tok(kind: number, text: string, op: OpInfo, at: number): Tok {
  return {
    kind,
    text,
    named: false,
    nonEmpty: false,
    wide: kind === LIST,
    forbid: null,
    next: "",
    soft: false,
    prev: "",
    prefix: -1,
    sep: 0,
    op,
    keep: NO_KEEP,
    at,
  };
}
const NO_KEEP = new Uint8Array(128);

class CompiledUriTemplate implements UriTemplate {
  readonly template: string;
  readonly variables: readonly UriVariable[];
  readonly literalPrefix: string;
  readonly isTemplate: boolean;
  readonly #maxUriLength: number;
  readonly #path: Section = { toks: [], pivot: -1 };
  readonly #fragment: Section = { toks: [], pivot: -1 };
  readonly #queryVars: QueryVar[] = [];
  readonly #queryPairs: string[] = [];
  readonly #steps: Step[] = [];
  #hasQuery = false;
  #hasFragment = false;

  constructor(template: string, parts: (string | Expr)[], maxUriLength: number) {
    this.template = template;
    this.#maxUriLength = maxUriLength;
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
    if (this.isTemplate) this.#compile(parts);
  }

  #compile(parts: (string | Expr)[]): void {
    const t = this.template;
    // where the query and fragment parts start decides which delimiters end a {+x}
    let where: 0 | 1 | 2 = 0; // path, query, fragment
    let at = 0;
    for (const p of parts) {
      if (typeof p === "string") {
        if (where === 1 && p[0] !== "&" && p[0] !== "#") {
          fail(
            t,
            at,
            "only {&…}, '&key=value' or a fragment may follow a query expression",
            "Move this text before the query.",
          );
        }
        at += p.length;
        const q = p.indexOf("?");
        const h = p.indexOf("#");
        if (where === 0 && q >= 0 && (h < 0 || q < h)) this.#hasQuery = true;
        if (where < 2 && h >= 0) this.#hasFragment = true;
        if (where === 0 && q >= 0 && (h < 0 || q < h)) where = 1;
        if (h >= 0) where = 2;
        continue;
      }
      at = p.end;
      if (p.op === "?" || p.op === "&") {
        if (where === 2) fail(t, p.at, "a query expression after the fragment", "Move it before the '#'.");
        this.#hasQuery = true;
        where = 1;
      } else if (p.op === "#" || where === 2) {
        this.#hasFragment = true;
        where = 2;
      } else if (where === 1) {
        fail(
          t,
          p.at,
          "only {?…}, {&…} or a fragment may follow the query",
          "Move this expression before the query.",
        );
      }
    }
    const sectionStop = this.#hasQuery ? "?#" : this.#hasFragment ? "#" : "";
    where = 0;
    let sec = this.#path;
    for (const p of parts) {
      if (typeof p === "string") {
        let text = p;
        if (where === 0) {
          const q = this.#hasQuery ? text.indexOf("?") : -1;
          const h = text.indexOf("#");
          const cut = q >= 0 && (h < 0 || q < h) ? q : h;
          if (cut < 0) {
            this.#literal(sec, text);
            continue;
          }
          this.#literal(sec, text.slice(0, cut));
          text = text.slice(cut);
          where = text[0] === "?" ? 1 : 2;
          if (where === 1) text = text.slice(1);
          else sec = this.#fragment;
        }
        if (where === 1) {
          const h = text.indexOf("#");
          this.#queryLiteral(h < 0 ? text : text.slice(0, h));
          if (h < 0) continue;
          text = text.slice(h);
          where = 2;
          sec = this.#fragment;
        }
        this.#literal(sec, text);
      } else if (p.op === "?" || p.op === "&") {
        where = 1;
        for (const v of p.vars) {
          if (this.#queryPairs.some((pair) => pair.split("=")[0] === v.name)) {
            fail(t, v.at, `'${v.name}' is also a literal query parameter`, "Remove one of the two.");
          }
          const qv: QueryVar = { name: v.name, explode: v.explode, keep: keepTable(false, "") };
          this.#queryVars.push(qv);
          this.#steps.push({ kind: "qvar", v: qv });
        }
      } else {
        if (p.op === "#" && where !== 2) {
          where = 2;
          sec = this.#fragment;
        }
        this.#expression(sec, p);
      }
    }
    const frag = this.#fragment.toks;
    if (frag.length > 1 && frag[0]!.kind === LIST) {
      fail(
        t,
        frag[0]!.at,
        "an exploded {#…*} must end the template",
        "An empty list writes no '#', so what follows could not be found; move it before.",
      );
    }
    this.#finish(this.#path, sectionStop);
    this.#finish(this.#fragment, "");
  }

  #literal(sec: Section, text: string): void {
    if (text === "") return;
    const last = sec.toks[sec.toks.length - 1];
    if (last?.kind === LIT) last.text += text;
    else sec.toks.push(tok(LIT, text, OPS[""], -1));
    const step = this.#steps[this.#steps.length - 1];
    if (step?.kind === "lit") step.text += text;
    else this.#steps.push({ kind: "lit", text });
  }

  #queryLiteral(text: string): void {
    for (const pair of text.split("&")) {
      if (pair === "") continue;
      const key = pair.split("=")[0];
      if (this.#queryVars.some((v) => v.name === key)) {
        fail(
          this.template,
          this.template.indexOf(pair),
          `'${key}' is also a query variable`,
          "Remove one of the two.",
        );
      }
      if (this.#queryPairs.length === 30)
        fail(this.template, this.template.indexOf(pair), "more than 30 literal query pairs", "Use fewer.");
      this.#queryPairs.push(pair);
      this.#steps.push({ kind: "qpair", text: pair });
    }
  }

  #expression(sec: Section, p: Expr): void {
    const t = this.template;
    const op = OPS[p.op];
    const step: Step = { kind: "expr", op, toks: [] };
    this.#steps.push(step);
    const prev = sec.toks[sec.toks.length - 1];
    const first = p.vars[0]!;
    if (first.explode || p.vars.length > 1) {
      const exploded = p.vars.find((v) => v.explode);
      if (exploded && p.vars.length > 1) {
        fail(
          t,
          exploded.at,
          "an exploded variable must be alone in its expression",
          `Write it as its own expression, e.g. {${p.op}${exploded.name}*}.`,
        );
      }
    }
    if (first.explode) {
      if (prev && prev.kind !== LIT && (op.first === "" || prev.kind === LIST)) this.#adjacent(p.at);
      const list = tok(LIST, first.name, op, p.at);
      list.named = op.named;
      list.prefix = op.first === "" ? -1 : op.first.charCodeAt(0);
      list.sep = op.sep.charCodeAt(0);
      const forbid = FORBID[p.op];
      list.forbid = forbid ? forbid.slice() : null;
      if (list.forbid) list.forbid[list.sep] = 0;
      sec.toks.push(list);
      step.toks.push(list);
      return;
    }
    p.vars.forEach((v, i) => {
      const lead = (i === 0 ? op.first : op.sep) + (op.named ? v.name : "");
      if (
        lead === "" &&
        sec.toks[sec.toks.length - 1]?.kind !== undefined &&
        sec.toks[sec.toks.length - 1]!.kind !== LIT
      ) {
        this.#adjacent(i === 0 ? p.at : v.at);
      }
      if (lead !== "") {
        const last = sec.toks[sec.toks.length - 1];
        if (last?.kind === LIT) last.text += lead;
        else sec.toks.push(tok(LIT, lead, op, -1));
      }
      const slot = tok(SLOT, v.name, op, p.at);
      slot.named = op.named;
      slot.nonEmpty = p.op === "" || p.op === "+";
      // earlier variables of {+a,b} end at the first ',', like {a,b}
      slot.wide = op.reserved && i === p.vars.length - 1;
      slot.forbid = FORBID[p.op] ?? null;
      sec.toks.push(slot);
      step.toks.push(slot);
    });
  }

  #adjacent(at: number): never {
    fail(
      this.template,
      at,
      "two variables must be separated by a literal",
      "Put a literal between them (for example {a}-{b}), or use an operator with a prefix such as {/b} or {.b}.",
    );
  }

  /** Picks the pivot and what ends each value, and from that what `expand` must encode. */
  #finish(sec: Section, sectionStop: string): void {
    const toks = sec.toks;
    for (let i = 0; i < toks.length; i++) {
      const k = toks[i]!;
      if (k.kind === LIT) continue;
      if (k.wide) {
        if (sec.pivot >= 0 && toks[sec.pivot]!.wide) {
          fail(
            this.template,
            k.at,
            "only one {+…}, {#…} or exploded variable is allowed per path (and per fragment)",
            "They would be ambiguous; separate them with a query, or make one of them a simple {variable}.",
          );
        }
        sec.pivot = i;
      } else if (sec.pivot < 0 || !toks[sec.pivot]!.wide) {
        sec.pivot = i;
      }
    }
    for (let i = 0; i < toks.length; i++) {
      const k = toks[i]!;
      if (k.kind === LIT) continue;
      let extra = k.op.reserved ? sectionStop : "";
      if (k.kind === LIST && k.op.reserved) extra += ",";
      if (k.kind === LIST && k.op.first === ".") extra += ".";
      if (i < sec.pivot) {
        const after = toks[i + 1]!;
        k.next = after.kind === LIT ? after.text : String.fromCharCode(after.prefix);
        k.soft = after.kind !== LIT;
        extra += k.next[0];
      } else if (i > sec.pivot) {
        k.prev = toks[i - 1]!.text;
        extra += k.prev[k.prev.length - 1];
      }
      k.keep = keepTable(k.op.reserved, extra);
    }
  }

  match(uri: string): UriValues | null {
    const len = uri.length;
    if (len > this.#maxUriLength) return null;
    if (!this.isTemplate) return uri === this.template ? (Object.create(null) as UriValues) : null;
    let frag = len;
    let query = -1;
    if (this.#hasQuery || this.#hasFragment) {
      const h = uri.indexOf("#");
      if (h >= 0) {
        if (!this.#hasFragment) return null;
        frag = h;
      }
    }
    if (this.#hasQuery) {
      query = uri.indexOf("?");
      if (query > frag) query = -1;
    }
    const out = Object.create(null) as UriValues;
    if (!matchSection(this.#path, uri, 0, query < 0 ? frag : query, out)) return null;
    if (this.#hasFragment && !matchSection(this.#fragment, uri, frag, len, out)) return null;
    if (this.#hasQuery && !this.#matchQuery(uri, query < 0 ? frag : query + 1, frag, out)) return null;
    if (uri.includes("%")) {
      for (const name in out) {
        const v = out[name]!;
        if (typeof v === "string") out[name] = decode(v, uri);
        else for (let i = 0; i < v.length; i++) v[i] = decode(v[i]!, uri);
      }
    }
    return out;
  }

  #matchQuery(uri: string, start: number, end: number, out: UriValues): boolean {
    const vars = this.#queryVars;
    const pairs = this.#queryPairs;
    let seen = 0;
    let i = start;
    while (i < end) {
      let amp = uri.indexOf("&", i);
      if (amp < 0 || amp > end) amp = end;
      for (let p = 0; p < pairs.length; p++) {
        const pair = pairs[p]!;
        if (pair.length === amp - i && uri.startsWith(pair, i)) seen |= 1 << p;
      }
      for (let v = 0; v < vars.length; v++) {
        const { name, explode } = vars[v]!;
        const n = i + name.length;
        if (n > amp || !uri.startsWith(name, i) || (n < amp && uri.charCodeAt(n) !== 61)) continue;
        const value = n === amp ? "" : uri.slice(n + 1, amp);
        const had = out[name];
        if (explode) {
          if (had === undefined) out[name] = [value];
          else (had as string[]).push(value);
        } else if (had === undefined) out[name] = value;
        break;
      }
      i = amp + 1;
    }
    return seen === (1 << pairs.length) - 1;
  }

  expand(values: UriExpandValues): string {
    if (!this.isTemplate) return this.template;
    let out = "";
    let query = false;
    for (const step of this.#steps) {
      if (step.kind === "lit") out += step.text;
      else if (step.kind === "qpair") {
        out += (query ? "&" : "?") + step.text;
        query = true;
      } else if (step.kind === "qvar") {
        const { name, explode, keep } = step.v;
        const v = Object.hasOwn(values, name) ? values[name] : undefined;
        if (v === undefined) continue;
        for (const item of explode ? listValue(name, v) : [stringValue(name, v)]) {
          out += (query ? "&" : "?") + name + "=" + encode(item, keep, name);
          query = true;
        }
      } else out += expandExpr(step.op, step.toks, values);
    }
    return out;
  }
}

function expandExpr(op: OpInfo, toks: Tok[], values: UriExpandValues): string {
  let out = "";
  for (let i = 0; i < toks.length; i++) {
    const k = toks[i]!;
    const v = Object.hasOwn(values, k.text) ? values[k.text] : undefined;
    if (v === undefined) throw new TypeError(`expand: the path variable '${k.text}' is missing`);
    if (k.kind === LIST) {
      const items = listValue(k.text, v);
      for (let j = 0; j < items.length; j++) {
        out += j === 0 ? op.first : op.sep;
        if (k.named) out += k.text + (items[j] === "" ? "" : "=");
        out += encode(items[j]!, k.keep, k.text);
      }
      continue;
    }
    const s = stringValue(k.text, v);
    // an empty `;` value is written `;x`, but `;x=` when a literal '=' follows, which match skips first
    const eq = s !== "" || k.next.charCodeAt(0) === 61;
    out +=
      (i === 0 ? op.first : op.sep) + (k.named ? k.text + (eq ? "=" : "") : "") + encode(s, k.keep, k.text);
  }
  return out;
}

function stringValue(name: string, v: string | readonly string[]): string {
  if (typeof v !== "string")
    throw new TypeError(`expand: '${name}' is not exploded, so its value must be a string`);
  return v;
}

function listValue(name: string, v: string | readonly string[]): readonly string[] {
  if (!Array.isArray(v))
    throw new TypeError(`expand: '${name}' is exploded, so its value must be an array of strings`);
  return v;
}

const HEX = "0123456789ABCDEF";

/** Percent-encodes every character `keep` does not list; `%` is never in `keep`. */
function encode(s: string, keep: Uint8Array, name: string): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 128 && keep[c]) continue;
    out += s.slice(from, i);
    if (c < 128) out += "%" + HEX[c >> 4] + HEX[c & 15];
    else {
      const wide = c >= 0xd800 && c <= 0xdbff && i + 1 < s.length;
      try {
        out += encodeURIComponent(s.slice(i, wide ? i + 2 : i + 1));
      } catch {
        throw new TypeError(`expand: the value of '${name}' is not well-formed Unicode (a lone surrogate)`);
      }
      if (wide) i++;
    }
    from = i + 1;
  }
  return from === 0 ? s : out + s.slice(from);
}

/** Decodes once; a malformed escape is the client's error, reported as invalid params. */
function decode(raw: string, uri: string): string {
  if (!raw.includes("%")) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    const shown = uri.length > 200 ? uri.slice(0, 200) + "…" : uri;
    const bad = /%(?![0-9A-Fa-f]{2})/.exec(raw);
    const why = bad
      ? `"${raw.slice(bad.index, bad.index + 3)}" is not a %XX escape`
      : "its escapes are not valid UTF-8";
    throw new McpError(ErrorCode.InvalidParams, `Malformed percent-encoding in URI ${shown}: ${why}`, {
      uri,
    });
  }
}

/** Matches one part; forward up to the pivot, backward after it, the pivot takes the rest. */
function matchSection(sec: Section, uri: string, start: number, end: number, out: UriValues): boolean {
  const toks = sec.toks;
  const pivot = sec.pivot;
  if (pivot < 0) {
    const text = toks.length === 0 ? "" : toks[0]!.text;
    return end - start === text.length && uri.startsWith(text, start);
  }
  let q = end;
  for (let i = toks.length - 1; i > pivot; i--) {
    const k = toks[i]!;
    if (k.kind === LIT) {
      const s = q - k.text.length;
      if (s < start || !uri.startsWith(k.text, s)) return false;
      q = s;
    } else {
      const from = q - k.prev.length;
      if (from < start) return false;
      const found = uri.lastIndexOf(k.prev, from);
      if (found < start) return false;
      const s = found + k.prev.length;
      if (!takeSlot(k, uri, s, q, out)) return false;
      q = s;
    }
  }
  let p = start;
  for (let i = 0; i < pivot; i++) {
    const k = toks[i]!;
    if (k.kind === LIT) {
      if (p + k.text.length > q || !uri.startsWith(k.text, p)) return false;
      p += k.text.length;
    } else {
      // a `;` value starts with its own '=', which must not end it
      let e = uri.indexOf(k.next, k.named && uri.charCodeAt(p) === 61 ? p + 1 : p);
      if (e < 0 || e + k.next.length > q) {
        if (!k.soft) return false;
        e = q;
      }
      if (!takeSlot(k, uri, p, e, out)) return false;
      p = e;
    }
  }
  if (p > q) return false;
  const k = toks[pivot]!;
  return k.kind === LIST ? takeList(k, uri, p, q, out) : takeSlot(k, uri, p, q, out);
}

function takeSlot(k: Tok, uri: string, s: number, e: number, out: UriValues): boolean {
  if (k.named) {
    if (s === e) {
      out[k.text] = "";
      return true;
    }
    if (uri.charCodeAt(s) !== 61) return false;
    s++;
  } else if (s === e && k.nonEmpty) return false;
  const forbid = k.forbid;
  if (forbid !== null) {
    for (let i = s; i < e; i++) {
      const c = uri.charCodeAt(i);
      if (c < 128 && forbid[c]) return false;
    }
  }
  out[k.text] = uri.slice(s, e);
  return true;
}

function takeList(k: Tok, uri: string, s: number, e: number, out: UriValues): boolean {
  const items: string[] = [];
  out[k.text] = items;
  if (s === e) return true;
  if (k.prefix >= 0) {
    if (uri.charCodeAt(s) !== k.prefix) return false;
    s++;
  }
  const forbid = k.forbid;
  const name = k.text;
  for (let i = s; ; ) {
    let j = i;
    while (j < e) {
      const c = uri.charCodeAt(j);
      if (c === k.sep) break;
      if (forbid !== null && c < 128 && forbid[c]) return false;
      j++;
    }
    if (!k.named) items.push(uri.slice(i, j));
    else {
      const n = i + name.length;
      if (n > j || !uri.startsWith(name, i)) return false;
      if (n === j) items.push("");
      else if (uri.charCodeAt(n) === 61) items.push(uri.slice(n + 1, j));
      else return false;
    }
    if (j === e) return true;
    i = j + 1;
  }
}
