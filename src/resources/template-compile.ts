/**
 * The registration-time half of a URI template: turns the literals and expressions that `parseUriTemplate`
 * splits a template into a {@link Scanner}, rejecting what could not be matched back unambiguously.
 * `template-layout.ts` first decides where its query and fragment start.
 */
import { charTable, encodeUriText } from "./percent.js";
import { type Expr, fail, type UriOperator } from "./template-error.js";
import { layout } from "./template-layout.js";
import {
  LIST,
  LIT,
  OPT,
  type OpInfo,
  type QueryVar,
  type Scanner,
  type Section,
  SLOT,
  type Tok,
} from "./template-scan.js";

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
    lead: "",
    named: false,
    wide: kind === LIST,
    forbid: null,
    next: "",
    alt: null,
    lit: "",
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
    path: { toks: [], pivot: -1, floor: 0 },
    fragment: { toks: [], pivot: -1, floor: 0 },
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
    compile(sc, parts);
    const first = sc.path.toks[0];
    sc.literalPrefix = first?.kind === LIT ? first.text : "";
  }
  return sc;
}

function compile(sc: Scanner, parts: (string | Expr)[]): void {
  const t = sc.template;
  layout(sc, parts);
  let where: 0 | 1 | 2 = 0; // path, query, fragment
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
  // with an escape in the literal, a URI may write its character raw (`é` for `%C3%A9`)
  if (e.includes("%")) sc.iri = true;
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
    if (lead === "" && last && last.kind !== LIT) adjacent(sc.template, p.at);
    // with a lead, an undefined variable leaves a trace (no lead), so it can be absent; {x} and {+x}
    // write nothing for undefined as for "", and read ""
    const slot = tok(lead === "" ? SLOT : OPT, v.name, op, p.at);
    slot.lead = lead;
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

/**
 * What may end the value of `toks[i]`, before the pivot: the literal after it; or, when variables that may
 * be absent (OPT) follow, each one's lead up to the next literal or list (any of them may be the first there).
 */
function ends(toks: Tok[], i: number, pivot: number): void {
  const k = toks[i]!;
  const texts: string[] = [];
  let j = i + 1;
  for (; toks[j]?.kind === OPT; j++) {
    texts.push(toks[j]!.lead);
    if (j === pivot) break;
  }
  const after = toks[j];
  k.soft = after === undefined || after.kind !== LIT;
  if (after !== undefined && after.kind !== OPT) {
    texts.push(after.kind === LIT ? after.text : String.fromCharCode(after.prefix));
  }
  k.next = texts[0]!;
  k.alt = texts.length > 1 ? texts.slice(1) : null;
  if (k.kind === OPT && after?.kind === LIT) k.lit = after.text;
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
    const after = toks[i + 1];
    if (k.named && k.kind !== LIST && after?.kind === LIT && after.text[0] === "=") {
      fail(
        template,
        k.at,
        "a {;…} variable followed by '='",
        "';x=' could be an empty x and the '=', or the start of x's value; put another literal between them.",
      );
    }
    if (i < sec.pivot) ends(toks, i, sec.pivot);
    else if (i > sec.pivot) {
      const before = toks[i - 1]!;
      k.prev = before.kind === LIT ? before.text : "";
      if (k.kind === OPT) k.next = k.prev + k.lead;
    }
  }
  if (sec.pivot > 0 && toks[0]!.kind === LIT) sec.floor = toks[0]!.text.length;
}
