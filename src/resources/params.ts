/**
 * The variables of a URI template, inferred from its string literal (types only, no runtime code).
 * Mirrors `parseUriTemplate(…).match`: path variables are `string` (with a prefix `{x:3}` too); optional
 * (`?:`) where match may leave them out: query variables (`{?…}`, `{&…}`), those of `{/…}`, `{.…}`,
 * `{;…}` and `{#…}`, all but the first of `{x,y}` and `{+x,y}`; exploded path variables (`{/x*}`)
 * `string[]` (`[]` when absent), an exploded query
 * variable (`{?x*}`) a record of the other keys, where a key the URI repeats is the list of its values
 * (`Record<string, string | string[]>`). Works one `{…}` expression at a time.
 */

type QueryOperator = "?" | "&";
/** Operators that write a lead before each value (`/`, `.`, `;name`, `#`): an undefined variable leaves none. */
type LeadOperator = "#" | "." | "/" | ";";
type Operator = "+" | LeadOperator | QueryOperator;

/** One variable of an expression: `name`, `name*` or `name:3`; `Optional` when match may leave it out. */
type VarSpec<
  Spec extends string,
  Query extends boolean,
  Optional extends boolean,
> = Spec extends `${infer Name}*`
  ? Query extends true
    ? { [K in Name]?: Record<string, string | string[]> }
    : { [K in Name]: string[] }
  : Spec extends `${infer Name}:${string}`
    ? VarSpec<Name, Query, Optional>
    : Optional extends true
      ? { [K in Spec]?: string }
      : { [K in Spec]: string };

/** `a,b*,c` → the intersection of each variable's entry; after the first, every one is optional (a `,` leads it). */
type VarList<
  List extends string,
  Query extends boolean,
  Optional extends boolean,
  Acc = unknown,
> = List extends `${infer Spec},${infer Rest}`
  ? VarList<Rest, Query, true, Acc & VarSpec<Spec, Query, Optional>>
  : Acc & VarSpec<List, Query, Optional>;

/** One expression's body, operator first: `{x,y}` and `{+x,y}` always read their first variable. */
type Expression<Body extends string> = Body extends `${infer Op extends Operator}${infer List}`
  ? Op extends QueryOperator
    ? VarList<List, true, true>
    : VarList<List, false, Op extends LeadOperator ? true : false>
  : VarList<Body, false, false>;

/** Walks the template one `{…}` at a time (tail-recursive, so long templates stay cheap). */
type Walk<T extends string, Acc = unknown> = T extends `${string}{${infer Body}}${infer Rest}`
  ? Walk<Rest, Acc & Expression<Body>>
  : Acc;

type Flatten<T> = { [K in keyof T]: T[K] } & {};

/** What a template built from a non-literal `string` gives: any name, any shape. */
export type LooseUriParams = Record<
  string,
  string | string[] | Record<string, string | string[]> | undefined
>;

/**
 * The decoded variables of a URI template, as `match` returns them.
 * @example
 * type P = UriParams<"github://{owner}/{repo}/readme{?ref}">;
 * //   ^? { owner: string; repo: string; ref?: string }
 */
export type UriParams<T extends string> = string extends T ? LooseUriParams : Flatten<Walk<T>>;

/** The union of the variable names of a template (`string` for a non-literal template). */
export type UriVariableName<T extends string> = string extends T ? string : keyof Walk<T> & string;
