/**
 * What the Streamable HTTP handler answers with: a plain {@link Reply} that the fetch handler turns
 * into a `Response` at the very end, and that the `node:http` bridge writes as it is (a `Response`
 * costs more to build than the exchange it carries). A `Response` a user's hook made passes as it is.
 */

/** The handler's own answer: a status, headers (lower-case names, never changed once made) and a body. */
export class Reply {
  readonly status: number;
  readonly headers: { readonly [name: string]: string };
  readonly body: string | null | ReadableStream<Uint8Array>;

  constructor(
    status: number,
    headers: { readonly [name: string]: string },
    body: string | null | ReadableStream<Uint8Array>,
  ) {
    this.status = status;
    this.headers = headers;
    this.body = body;
  }
}

/** A reply of the handler's, or a `Response` of a user's hook (an `authenticate` verdict). */
export type Answer = Reply | Response;

/** Where a handler made by `createHttpHandler` keeps the function that answers with {@link Answer}s. */
export const ANSWER: unique symbol = Symbol("picomcp.answer");

/** A fetch handler that may also answer without making a `Response` (see {@link ANSWER}). */
export interface Answering {
  [ANSWER]?: (request: Request) => Answer | Promise<Answer>;
}

/** The text of responses made from a string, so that a bridge can write it whole instead of streaming it. */
const texts = new WeakMap<Response, string>();

/** A response whose body is `text`, remembered for {@link textOf}. */
export function textResponse(
  text: string,
  status: number,
  headers: { readonly [name: string]: string },
): Response {
  const response = new Response(text, { status, headers });
  texts.set(response, text);
  return response;
}

/** The body of a response made by {@link textResponse} whose body nobody has read, else undefined. */
export function textOf(response: Response): string | undefined {
  return response.bodyUsed ? undefined : texts.get(response);
}

/** The `Response` of an answer: the same status, headers and bytes. */
export function toResponse(answer: Answer): Response {
  if (answer instanceof Response) return answer;
  const { status, headers, body } = answer;
  return typeof body === "string"
    ? textResponse(body, status, headers)
    : new Response(body, { status, headers });
}

/** A header of an answer (`name` in lower case), or null. */
export function headerOf(answer: Answer, name: string): string | null {
  return answer instanceof Response ? answer.headers.get(name) : (answer.headers[name] ?? null);
}

/**
 * The answer with headers set (`set`: replaced) and appended to (`append`: joined with ", " to a value
 * already there), as `Headers.set` and `append` do; a response whose headers are immutable is copied.
 */
export function withHeaders<A extends Answer>(
  answer: A,
  set: { readonly [name: string]: string },
  append?: { readonly [name: string]: string },
): A {
  if (!(answer instanceof Response)) {
    const headers: { [name: string]: string } = { ...answer.headers, ...set };
    for (const name in append) {
      const had = headers[name];
      headers[name] = had === undefined ? append[name]! : `${had}, ${append[name]}`;
    }
    return new Reply(answer.status, headers, answer.body) as A;
  }
  const add = (h: Headers) => {
    for (const name in set) h.set(name, set[name]!);
    for (const name in append) h.append(name, append[name]!);
  };
  try {
    add(answer.headers);
    return answer;
  } catch {
    const copy = new Response(answer.body, answer);
    add(copy.headers);
    return copy as A;
  }
}
