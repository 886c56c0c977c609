/**
 * Where a template's query and fragment start, and what may stand where: a literal `?` starts the
 * query only when no path expression follows it (`search://q?term={term}` keeps it in the path),
 * `{&…}` continues a query, a second `{?…}` would write a second `?`. Sets the scanner's section flags.
 */
import { type Expr, fail } from "./template-error.js";
import type { Scanner } from "./template-scan.js";

/** Checks the layout of `parts` and sets `hasQuery`, `hasFragment` and `ampQuery`; throws {@link fail}. */
export function layout(sc: Scanner, parts: (string | Expr)[]): void {
  const t = sc.template;
  unique(t, parts);
  let where: 0 | 1 | 2 = 0; // path, query, fragment
  let at = 0;
  let pathQuestion = -1; // a literal '?' that stays in the path, as in `search://q?term={term}`
  let openedBy: "" | "?" | "{?" = "";
  let pathAmp = -1; // a '&' in the path, which a query starting with '&' could not be told from
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
      const amp = p.indexOf("&");
      if (where === 0 && pathAmp < 0 && amp >= 0 && (q < 0 || amp < q) && (h < 0 || amp < h))
        pathAmp = at + amp;
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
  if (sc.ampQuery && pathAmp >= 0) {
    fail(
      t,
      pathAmp,
      "a '&' in the path, and a query that starts with '&' when its {?…} variables are undefined",
      "Remove the '&' from the path, or start the query with a literal '?'.",
    );
  }
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

/**
 * A template with the names of its variables blanked where they do not decide what matches: two
 * templates with one shape match the same URIs. Query variables are optional and other query keys are
 * let through, so `{?q}` matches what `{?lang}` does; a `;` expression's names must show in the URI.
 */
export function templateShape(template: string): string {
  return template.replace(/\{([+#./;?&]?)([^}]*)\}/g, (whole, op: string, list: string) => {
    if (op === ";") return whole;
    const blanked = list.split(",").map((spec) => spec.replace(/^[^:*]+/, "_"));
    return `{${op}${blanked.join(",")}}`;
  });
}
