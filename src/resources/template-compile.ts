/**
 * The registration-time half of a URI template: turns the literals and expressions that `parseUriTemplate`
 * splits a template into a {@link Scanner}, rejecting what could not be matched back unambiguously. Also home
 * to {@link UriTemplateError}, which both halves of parsing throw.
 */
import { charTable, encodeUriText } from "./percent.js";
import { LIST, LIT, type OpInfo, type QueryVar, type Scanner, type Section, SLOT, type Tok } from "./template-scan.js";

/** An RFC 6570 operator; `""` is simple string expansion. */
export type UriOperator = "" | "+" | "#" | "." | "/" | ";" | "?" | "&";

/** A template that cannot be used; thrown at registration, with a caret under the offending place. */
export class UriTemplateError extends Error {
  /** The template as given. */
  readonly template: string;
  /** Index in `template` of the offending place. */
  readonly index: number;

  constructor(template: string, index: number, reason: string, hint: string) {
    const shown = template.replace(/[\u0000-\u001f\u007f]/g, "?");
    const column = Array.from(template.slice(0, index)).length;
    super(`Invalid URI template: ${reason}\n  ${shown}\n  ${" ".repeat(column)}^\n${hint}`);
    this.name = "UriTemplateError";
    this.template = template;
    this.index = index;
  }
}

/** Throws a {@link UriTemplateError} for `template`, pointing at `index`. */
export function fail(template: string, index: number, reason: string, hint: string): never {
  throw new UriTemplateError(template, index, reason, hint);
}

/** One `{…}` expression of a template: its operator, its variables, where it starts and ends. */
export interface Expr {
  op: UriOperator;
  vars: { name: string; explode: boolean; prefix: number; at: number }[];
  at: number;
  end: number;
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

/** Raw characters a value may not contain, by operator; `+` and `#` take anything. A `,` is allowed: a list without explode writes one. */
const FORBID: Record<string, Uint8Array | null> = {
  "": charTable("/?#"),
  ".": charTable("/?#"),
  "/": charTable("/?#"),
  ";": charTable("/?#;"),
  "+": null,
  "#": null,
};

/** The same for list items, whose separator splits them instead. */
const LIST_FORBID: Record<string, Uint8Array | null> = {
  "": charTable("/?#"),
  ".": charTable("/?#,"),
  "/": charTable("?#,"),
  ";": charTable("/?#,"),
  "+": null,
  "#": null,
};

/** A token with every field set, so that all tokens share one shape. */
function tok(kind: number, text: string, op: OpInfo, at: number): Tok {
  return {
    kind,
    text,
    named: false,
    wide: kind === LIST,
    forbid: null,
    next: "",
    soft: false,
    prev: "",
    prefix: -1,
    sep: 0,
    op,
    at,
  };
}

/** Builds the scanner of a template split into literals and expressions; throws {@link UriTemplateError}. */
export function compileScanner(
  template: string,
  parts: (string | Expr)[],
  isTemplate: boolean,
  maxUriLength: number,
): Scanner {
  const sc: Scanner = {
    template,
    isTemplate,
    maxUriLength,
    path: { toks: [], pivot: -1 },
    fragment: { toks: [], pivot: -1 },
    queryVars: [],
    queryPairs: [],
    pairKeys: [],
    record: null,
    prefixed: [],
    literalPrefix: template,
    hasQuery: false,
    hasFragment: false,
    ampQuery: false,
    iri: false,
  };
  if (isTemplate) {
    unique(template, parts);
    compile(sc, parts);
    const first = sc.path.toks[0];
    sc.literalPrefix = first?.kind === LIT ? first.text : "";
  }
  return sc;
}

/** A name may repeat in RFC 6570 (`{/x:1,x}`), but `match` reads one value per name. */
function unique(template: string, parts: (string | Expr)[]): void {
  const seen = new Set<string>();
  for (const p of parts) {
    if (typeof p === "string") continue;
    for (const v of p.vars) {
      if (seen.has(v.name))
        fail(template, v.at, `the variable '${v.name}' appears twice`, "Give each variable its own name.");
      seen.add(v.name);
    }
  }
}

/** Whether the literal `?` at `q` of `parts[index]` starts a query: no path expression follows it before the fragment. */
function opensQuery(parts: (string | Expr)[], index: number, q: number): boolean {
  const here = parts[index] as string;
  if (here.indexOf("#", q) >= 0) return true;
  for (let i = index + 1; i < parts.length; i++) {
    const p = parts[i]!;
    if (typeof p === "string") {
      if (p.includes("#")) return true;
    } else if (p.op === "#") return true;
    else if (p.op !== "?" && p.op !== "&") return false;
  }
  return true;
}

function compile(sc: Scanner, parts: (string | Expr)[]): void {
  const t = sc.template;
  // where the query and fragment parts start decides which delimiters end a {+x}
  let where: 0 | 1 | 2 = 0; // path, query, fragment
  let at = 0;
  let pathQuestion = -1; // a literal '?' that stays in the path, as in `search://q?term={term}`
  let openedBy: "" | "?" | "{?" = "";
  for (let index = 0; index < parts.length; index++) {
    const p = parts[index]!;
    if (typeof p === "string") {
      if (where === 1 && p[0] !== "&" && p[0] !== "#") {
        fail(
          t,
          at,
          "only {&…}, '&key=value' or a fragment may follow a query expression",
          "Move this text before the query.",
        );
      }
      if (where === 1 && openedBy === "{?" && p[0] === "&") sc.ampQuery = true;
      const q = p.indexOf("?");
      const h = p.indexOf("#");
      if (where === 0 && q >= 0 && (h < 0 || q < h)) {
        if (opensQuery(parts, index, q)) {
          sc.hasQuery = true;
          where = 1;
          openedBy = "?";
        } else pathQuestion = at + q;
      }
      at += p.length;
      if (h >= 0) {
        sc.hasFragment = true;
        where = 2;
      }
      continue;
    }
    at = p.end;
    if (p.op === "?" || p.op === "&") {
      if (where === 2) fail(t, p.at, "a query expression after the fragment", "Move it before the '#'.");
      if (p.op === "?" && where === 1)
        fail(t, p.at, "a second '?' in the query", "Continue the query with {&…}, which writes '&'.");
      if (p.op === "&" && where === 0) {
        fail(
          t,
          p.at,
          "a {&…} before the query starts writes '&' where no query is",
          "Start the query with {?…} or a literal '?'.",
        );
      }
      if (p.op === "&" && openedBy === "{?") sc.ampQuery = true;
      if (p.op === "?") openedBy = "{?";
      sc.hasQuery = true;
      where = 1;
    } else if (p.op === "#" || where === 2) {
      sc.hasFragment = true;
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
  if (pathQuestion >= 0 && sc.hasQuery) {
    fail(
      t,
      pathQuestion,
      "a literal '?' before a path expression, and a query after it",
      "Keep every expression before the '?' in the path, or write the query with {?…} and {&…} only.",
    );
  }
  where = 0;
  let sec = sc.path;
  for (const p of parts) {
    if (typeof p === "string") {
      let text = p;
      if (where === 0) {
        const q = sc.hasQuery ? text.indexOf("?") : -1;
        const h = text.indexOf("#");
        const cut = q >= 0 && (h < 0 || q < h) ? q : h;
        if (cut < 0) {
          literal(sc, sec, text);
          continue;
        }
        literal(sc, sec, text.slice(0, cut));
        text = text.slice(cut);
        where = text[0] === "?" ? 1 : 2;
        if (where === 1) text = text.slice(1);
        else sec = sc.fragment;
      }
      if (where === 1) {
        const h = text.indexOf("#");
        queryLiteral(sc, h < 0 ? text : text.slice(0, h));
        if (h < 0) continue;
        text = text.slice(h);
        where = 2;
        sec = sc.fragment;
      }
      literal(sc, sec, text);
    } else if (p.op === "?" || p.op === "&") {
      where = 1;
      for (const v of p.vars) {
        if (sc.pairKeys.includes(v.name)) {
          fail(t, v.at, `'${v.name}' is also a literal query parameter`, "Remove one of the two.");
        }
        if (v.explode) {
          if (sc.record !== null) {
            fail(
              t,
              v.at,
              "a second exploded query variable",
              "The exploded one collects every other query key, so there can be only one.",
            );
          }
          sc.record = v.name;
          continue;
        }
        const qv: QueryVar = { name: v.name, max: v.prefix };
        sc.queryVars.push(qv);
        if (v.prefix > 0) sc.prefixed.push({ name: v.name, max: v.prefix });
      }
    } else {
      if (p.op === "#" && where !== 2) {
        where = 2;
        sec = sc.fragment;
      }
      expression(sc, sec, p);
    }
  }
  const frag = sc.fragment.toks;
  if (frag.length > 1 && frag[0]!.kind === LIST) {
    fail(
      t,
      frag[0]!.at,
      "an exploded {#…*} must end the template",
      "An empty list writes no '#', so what follows could not be found; move it before.",
    );
  }
  if (sc.ampQuery) {
    const amp = sc.path.toks.find((k) => k.kind === LIT && k.text.includes("&"));
    if (amp) {
      fail(
        t,
        t.indexOf("&"),
        "a '&' in the path, and a query that starts with '&' when its {?…} variables are undefined",
        "Remove the '&' from the path, or start the query with a literal '?'.",
      );
    }
  }
  finish(sc.template, sc.path);
  finish(sc.template, sc.fragment);
}

function literal(sc: Scanner, sec: Section, text: string): void {
  if (text === "") return;
  literalTok(sec, encoded(sc, text));
}

/** Literals are matched as `expand` writes them: encoded (RFC 6570 §3.1). */
function encoded(sc: Scanner, text: string): string {
  const e = encodeUriText(text)!;
  if (e !== text) sc.iri = true;
  return e;
}

/** Adjacent literals merge: between two variables there is always exactly one literal token. */
function literalTok(sec: Section, text: string): void {
  const last = sec.toks[sec.toks.length - 1];
  if (last?.kind === LIT) last.text += text;
  else sec.toks.push(tok(LIT, text, OPS[""], -1));
}

function queryLiteral(sc: Scanner, text: string): void {
  for (const raw of text.split("&")) {
    if (raw === "") continue;
    const pair = encoded(sc, raw);
    const key = pair.split("=")[0]!;
    if (sc.queryVars.some((v) => v.name === key) || sc.record === key) {
      fail(
        sc.template,
        sc.template.indexOf(pair),
        `'${key}' is also a query variable`,
        "Remove one of the two.",
      );
    }
    if (sc.queryPairs.length === 30)
      fail(sc.template, sc.template.indexOf(pair), "more than 30 literal query pairs", "Use fewer.");
    sc.queryPairs.push(pair);
    sc.pairKeys.push(key);
  }
}

function expression(sc: Scanner, sec: Section, p: Expr): void {
  const op = OPS[p.op];
  const exploded = p.vars.find((v) => v.explode);
  if (exploded && p.vars.length > 1) {
    fail(
      sc.template,
      exploded.at,
      "an exploded variable must be alone in its expression",
      `Write it as its own expression, e.g. {${p.op}${exploded.name}*}.`,
    );
  }
  for (let i = 0; i < p.vars.length; i++) {
    const v = p.vars[i]!;
    const last = sec.toks[sec.toks.length - 1];
    if (v.explode) {
      // a list's prefix (`/` of {/x*}) may keep it apart from a variable before it, never from a list
      if (last && last.kind !== LIT && (op.first === "" || last.kind === LIST)) adjacent(sc.template, p.at);
      const list = tok(LIST, v.name, op, p.at);
      list.named = op.named;
      list.prefix = op.first === "" ? -1 : op.first.charCodeAt(0);
      list.sep = op.sep.charCodeAt(0);
      list.forbid = LIST_FORBID[p.op] ?? null;
      sec.toks.push(list);
      continue;
    }
    const lead = (i === 0 ? op.first : op.sep) + (op.named ? v.name : "");
    if (lead !== "") literalTok(sec, lead);
    else if (last && last.kind !== LIT) adjacent(sc.template, p.at);
    const slot = tok(SLOT, v.name, op, p.at);
    slot.named = op.named;
    if (v.prefix > 0) sc.prefixed.push({ name: v.name, max: v.prefix });
    // earlier variables of {+a,b} end at the first ',', like {a,b}
    slot.wide = op.reserved && i === p.vars.length - 1;
    slot.forbid = FORBID[p.op] ?? null;
    sec.toks.push(slot);
  }
}

function adjacent(template: string, at: number): never {
  fail(
    template,
    at,
    "two variables must be separated by a literal",
    "Put a literal between them (for example {a}-{b}), or use an operator with a prefix such as {/b} or {.b}.",
  );
}

/** Picks the pivot and the literal that ends (before it) or starts (after it) each value. */
function finish(template: string, sec: Section): void {
  const toks = sec.toks;
  for (let i = 0; i < toks.length; i++) {
    const k = toks[i]!;
    if (k.kind === LIT) continue;
    if (k.wide) {
      if (sec.pivot >= 0 && toks[sec.pivot]!.wide) {
        fail(
          template,
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
    if (i < sec.pivot) {
      const after = toks[i + 1]!;
      k.next = after.kind === LIT ? after.text : String.fromCharCode(after.prefix);
      k.soft = after.kind !== LIT;
    } else if (i > sec.pivot) {
      k.prev = toks[i - 1]!.text;
    }
  }
}
