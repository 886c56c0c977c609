/** Reading the names a handler (a resource's read, a prompt's get) destructures from its parameters, from its source text. */
import type { ResourceContext } from "../context.js";
import { ContextView } from "../views/context-view.js";

/** What {@link destructuredNames} read: the keys of the first parameter's `{ … }` pattern. */
export interface DestructuredNames {
  /** The keys, in order (`{ user_id: id }` gives `user_id`: the key is what the caller must supply). */
  readonly keys: readonly string[];
  /** Whether the pattern ends with `...rest`. */
  readonly rest: boolean;
  /** The keys written with a default (`{ version = "latest" }`): the caller may leave them out. */
  readonly defaults: readonly string[];
}

/** The patterns of a function's first two parameters, as far as they are read. */
interface Heads {
  /** The first parameter's object pattern. */
  readonly first?: DestructuredNames;
  /** The second's, when the first is a plain name: SDK v1's `(uri, { id })`. */
  readonly second?: DestructuredNames;
}

const cache = new WeakMap<object, Heads>();

function headsOf(fn: unknown): Heads {
  if (typeof fn !== "function") return {};
  let found = cache.get(fn);
  if (found === undefined) {
    let source: string;
    try {
      source = Function.prototype.toString.call(fn);
    } catch {
      source = "";
    }
    found = headsInSource(source);
    cache.set(fn, found);
  }
  return found;
}

/**
 * The keys that `fn`'s first parameter destructures, when that parameter is an object pattern
 * (`({ owner, repo }) => …`, `async function ({ id = "1" }, ctx) {}`, `read({ a: { b } }) {}`);
 * `undefined` when it is anything else (a plain identifier, an array pattern, no parameter), when the
 * source cannot be read (a native or bound function), or when a key is computed (`{ [k]: v }`).
 * Reads `Function.prototype.toString` with a small scanner: never evaluates anything.
 */
export function destructuredNames(fn: unknown): DestructuredNames | undefined {
  return headsOf(fn).first;
}

/** {@link destructuredNames} over source text: undefined where the scanner cannot follow it. */
export function namesInSource(source: string): DestructuredNames | undefined {
  return headsInSource(source).first;
}

function headsInSource(source: string): Heads {
  try {
    return parse(source);
  } catch {
    return {}; // text the scanner does not follow: nothing is claimed about it
  }
}

class Unreadable extends Error {}

/** A cursor over source text that skips whitespace, comments, strings and balanced brackets. */
class Scanner {
  i = 0;
  readonly s: string;
  constructor(s: string) {
    this.s = s;
  }

  get done(): boolean {
    return this.i >= this.s.length;
  }

  peek(n = 0): string {
    return this.s[this.i + n] ?? "";
  }

  /** Skips whitespace and comments; the next significant character. */
  space(): string {
    const s = this.s;
    for (;;) {
      const c = s[this.i];
      if (c === undefined) return "";
      if (c === "/" && s[this.i + 1] === "/") {
        const end = s.indexOf("\n", this.i);
        this.i = end < 0 ? s.length : end + 1;
      } else if (c === "/" && s[this.i + 1] === "*") {
        const end = s.indexOf("*/", this.i + 2);
        if (end < 0) throw new Unreadable();
        this.i = end + 2;
      } else if (/\s/.test(c)) this.i++;
      else return c;
    }
  }

  /** An identifier (or keyword) at the cursor, or "" when none starts here. */
  ident(): string {
    const m = /^[\p{ID_Start}$_\\](?:[\p{ID_Continue}$\\]|\u200c|\u200d)*/u.exec(
      this.s.slice(this.i, this.i + 512),
    );
    if (!m) return "";
    this.i += m[0].length;
    return m[0];
  }

  /** A quoted string at the cursor (`'`, `"`), its value; `key`: refuse escapes it would have to decode. */
  string(key = false): string {
    const q = this.s[this.i++];
    let out = "";
    for (;;) {
      const c = this.s[this.i++];
      if (c === undefined) throw new Unreadable();
      if (c === q) return out;
      if (c === "\\") {
        const e = this.s[this.i++];
        if (e === undefined) throw new Unreadable();
        // a key spelled with escapes other than a quoted character is too rare to decode: give up on it
        if (key && /[a-zA-Z0-9]/.test(e)) throw new Unreadable();
        out += e;
      } else out += c;
    }
  }

  /** A template literal at the cursor, its `${…}` expressions included. */
  template(): void {
    this.i++; // the backtick
    for (;;) {
      const c = this.s[this.i++];
      if (c === undefined) throw new Unreadable();
      if (c === "`") return;
      if (c === "\\") this.i++;
      else if (c === "$" && this.s[this.i] === "{") {
        this.i++;
        this.until("}");
        this.i++;
      }
    }
  }

  /** A regular expression literal at the cursor (the `/` that starts it). */
  regex(): void {
    this.i++;
    let inClass = false;
    for (;;) {
      const c = this.s[this.i++];
      if (c === undefined || c === "\n") throw new Unreadable();
      if (c === "\\") this.i++;
      else if (c === "[") inClass = true;
      else if (c === "]") inClass = false;
      else if (c === "/" && !inClass) break;
    }
    this.ident(); // flags
  }

  /**
   * Skips an expression up to the first of `stops` outside any bracket, string, template or regex;
   * leaves the cursor on it. A `/` after an operand divides; anywhere else it starts a regex.
   */
  until(stops: string): void {
    let depth = 0;
    let operand = false;
    for (;;) {
      const c = this.space();
      if (c === "") throw new Unreadable();
      if (depth === 0 && stops.includes(c)) return;
      operand = this.step(c, operand, depth);
      if (c === "(" || c === "[" || c === "{") depth++;
      else if (c === ")" || c === "]" || c === "}") {
        if (depth === 0) throw new Unreadable();
        depth--;
      }
    }
  }

  /** Moves past one token of an expression that starts with `c`; whether it ends an operand. */
  step(c: string, operand: boolean, depth: number): boolean {
    if (c === "'" || c === '"') this.string();
    else if (c === "`") this.template();
    else if (c === "/" && !operand) this.regex();
    else if (c === "(" || c === "[" || c === "{") {
      this.i++;
      return false;
    } else if (c === ")" || c === "]" || c === "}") {
      if (depth === 0) throw new Unreadable();
      this.i++;
    } else if (/[0-9.]/.test(c)) {
      this.i++;
      while (/[\w.]/.test(this.peek())) this.i++;
    } else {
      const word = this.ident();
      // after a keyword such as return or typeof, a `/` starts a regex
      if (word) return !KEYWORDS_BEFORE_EXPRESSION.has(word);
      this.i++;
      return false;
    }
    return true;
  }
}

const KEYWORDS_BEFORE_EXPRESSION = new Set([
  "return",
  "typeof",
  "instanceof",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
  "case",
  "do",
  "else",
  "await",
  "yield",
]);

/** The names of the first parameter's object pattern in a function's source text, or undefined. */
function parse(source: string): Heads {
  if (/\{\s*\[native code\]\s*\}\s*$/.test(source)) return {};
  const p = new Scanner(source);
  // the head: `async`, `function`, `*`, a method's name (`read`, `"read"`, `[key]`, `get x`), up to
  // the `(` of the parameters; an `=>` first means one parameter without parentheses (an identifier)
  for (;;) {
    const c = p.space();
    if (c === "" || c === "{" || c === "=") return {};
    if (c === "(") break;
    if (c === "'" || c === '"') p.string();
    else if (c === "[") {
      p.i++;
      p.until("]");
      p.i++;
    } else if (c === "*") p.i++;
    else if (!p.ident()) return {};
  }
  p.i++;
  if (p.space() === "{") {
    const first = pattern(p);
    return followed(p) ? { first } : {};
  }
  // a plain first name (and its default), then maybe a second pattern
  if (!p.ident()) return {};
  if (p.space() === "=") {
    p.i++;
    p.until(",)");
  }
  if (p.space() !== ",") return {};
  p.i++;
  if (p.space() !== "{") return {};
  const second = pattern(p);
  return followed(p) ? { second } : {};
}

/**
 * Whether a whole pattern (its `}` at the cursor) is followed by what may follow it: the next
 * parameter, the end of the list, or its default. Anything else means the scanner lost its way.
 */
function followed(p: Scanner): boolean {
  p.i++;
  return ",)=".includes(p.space() || "?");
}

/** An object pattern at the cursor (`{`): its keys; nested patterns and defaults are skipped. */
function pattern(p: Scanner): DestructuredNames {
  p.i++;
  const keys: string[] = [];
  const defaults: string[] = [];
  let rest = false;
  for (;;) {
    let c = p.space();
    if (c === "}") break;
    if (c === ".") {
      if (p.s.slice(p.i, p.i + 3) !== "...") throw new Unreadable();
      p.i += 3;
      p.space();
      if (!p.ident()) throw new Unreadable();
      rest = true;
      c = p.space();
      if (c === ",") p.i++;
      continue;
    }
    let key: string;
    if (c === "'" || c === '"') key = p.string(true);
    else if (c === "[")
      throw new Unreadable(); // a computed key: its name is only known at run time
    else if (/[0-9]/.test(c)) {
      const m = /^[0-9][\w.]*/.exec(p.s.slice(p.i))!;
      p.i += m[0].length;
      key = String(Number(m[0].replace(/_/g, "")));
    } else {
      key = p.ident();
      if (!key || key.includes("\\")) throw new Unreadable();
    }
    keys.push(key);
    c = p.space();
    if (c === ":") {
      p.i++;
      p.until(",}="); // the binding target: a name, or a nested pattern (skipped whole)
      c = p.space();
    }
    if (c === "=") {
      defaults.push(key);
      p.i++;
      p.until(",}");
      c = p.space();
    }
    if (c === ",") p.i++;
    else if (c !== "}") throw new Unreadable();
  }
  return { keys, rest, defaults };
}

/**
 * The keys `fn` destructures without a default that `allowed` lacks, with all it destructures;
 * undefined when they fit or cannot be read. A key with a default (`{ version = "latest" }`) is
 * one the handler is ready to miss: a read shared by `docs://{id}` and `docs://{id}/v/{version}`.
 */
function unknownNames(
  fn: unknown,
  allowed: readonly string[],
): { unknown: string[]; keys: readonly string[] } | undefined {
  const names = destructuredNames(fn);
  if (names === undefined) return undefined;
  const unknown = names.keys.filter((k) => !allowed.includes(k) && !names.defaults.includes(k));
  return unknown.length === 0 ? undefined : { unknown, keys: names.keys };
}

/**
 * Names a read's context has (not SDK v1's): `uri` and every member of `Context`, as `ContextView`
 * (which implements all of them, the compiler checks) has them, so the list cannot drift.
 */
const CONTEXT_KEYS: ReadonlySet<string> = new Set([
  "uri" satisfies keyof ResourceContext,
  ...Object.getOwnPropertyNames(ContextView.prototype).filter((k) => k !== "constructor" && k !== "base"),
]);

/** `{a, b}`: a set of names as the registration errors print it. */
const nameSet = (names: readonly string[]) => `{${names.join(", ")}}`;

/** "is"/"it" or "are"/"them". */
const verbs = (n: number) => (n > 1 ? (["are", "them"] as const) : (["is", "it"] as const));

/**
 * Throws when a resource's `read` destructures a name that its template lacks (`users://{user_id}`
 * with `({ user })`), which would be undefined on every read. `variables` is undefined for a static URI.
 */
export function checkReadParams(uri: string, variables: readonly string[] | undefined, read: unknown): void {
  const v1 = variables && headsOf(read).second;
  // SDK v1's read took (uri, variables): its variables in the second place, where the context is here
  if (v1 && v1.keys.length > 0 && v1.keys.every((k) => variables.includes(k) && !CONTEXT_KEYS.has(k)))
    throw new TypeError(
      `Resource ${uri}: read takes the URI's variables first and the context second (SDK v1's callback took (uri, variables)): write read: ({ ${v1.keys.join(", ")} }, ctx) => …, with ctx.uri for the URI read`,
    );
  const bad = unknownNames(read, variables ?? []);
  if (!bad) return;
  const head = `Mismatch between URI parameters ${nameSet(variables ?? [])} and read parameters ${nameSet(bad.keys)} of resource ${uri}`;
  const [is, it] = verbs(bad.unknown.length);
  const missing = bad.unknown.join(", ");
  if (!variables)
    throw new TypeError(
      `${head}: a URI without {variables} gives read no parameters, so ${missing} would always be undefined. Write read: () => … (the context is the second argument), or put {${bad.unknown[0]}} in the URI to make it a template`,
    );
  throw new TypeError(
    `${head}: ${missing} ${is} not ${is === "is" ? "a variable" : "variables"} of the template, so read would get undefined. Rename ${it} in read to ${is === "is" ? "a variable" : "variables"} of the URI (${variables.join(", ")}), or rename the variable${is === "is" ? "" : "s"} in the URI`,
  );
}

/** Throws when a prompt's `get` destructures a name that is not one of its `args`. */
export function checkGetParams(name: string, args: readonly string[], get: unknown): void {
  const bad = unknownNames(get, args);
  if (!bad) return;
  const [is, it] = verbs(bad.unknown.length);
  throw new TypeError(
    `Mismatch between prompt arguments ${nameSet(args)} and get parameters ${nameSet(bad.keys)} of prompt "${name}": ${bad.unknown.join(", ")} ${is} not in args, so get would get undefined. Rename ${it} in get to an argument${args.length ? ` (${args.join(", ")})` : ""}, or add ${it} to args`,
  );
}
