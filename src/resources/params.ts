/**
 * The variables of a URI template, inferred from its string literal (types only, no runtime code).
 * Mirrors `parseUriTemplate(…).match`: path variables are `string` (with a prefix `{x:3}` too), query
 * variables (`{?…}`, `{&…}`) optional, exploded path variables (`{/x*}`) `string[]`, an exploded query
 * variable (`{?x*}`) a record of the other keys, where a key the URI repeats is the list of its values
 * (`Record<string, string | string[]>`). Works one `{…}` expression at a time.
 */

type QueryOperator = "?" | "&";
type Operator = "+" | "#" | "." | "/" | ";" | QueryOperator;

/** One variable of an expression: `name`, `name*` or `name:3`. */
type VarSpec<Spec extends string, Query extends boolean> = Spec extends `${infer Name}*`
  ? Query extends true
    ? { [K in Name]?: Record<string, string | string[]> }
    : { [K in Name]: string[] }
  : Spec extends `${infer Name}:${string}`
    ? VarSpec<Name, Query>
    : Query extends true
      ? { [K in Spec]?: string }
      : { [K in Spec]: string };

/** `a,b*,c` → the intersection of each variable's entry. */
type VarList<
  List extends string,
  Query extends boolean,
  Acc = unknown,
> = List extends `${infer Spec},${infer Rest}`
  ? VarList<Rest, Query, Acc & VarSpec<Spec, Query>>
  : Acc & VarSpec<List, Query>;

/** One expression's body, operator first. */
type Expression<Body extends string> = Body extends `${infer Op extends Operator}${infer List}`
  ? VarList<List, Op extends QueryOperator ? true : false>
  : VarList<Body, false>;

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
