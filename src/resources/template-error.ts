/**
 * What every stage of a URI template shares: the parsed form of an expression, and
 * {@link UriTemplateError}, which parsing and compiling throw.
 */

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
