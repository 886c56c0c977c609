/**
 * The 2026-07-28 revision over Streamable HTTP: every POST stands alone (no session, no handshake),
 * its headers must agree with its body, errors map to the statuses the revision names, and the
 * response is JSON, or SSE once a related notification comes first (a `subscriptions/listen` stream
 * stays open until the client closes it, which cancels the request).
 */
import type { AuthInfo, Connection, ConnectionOptions } from "../connection.js";
import { hasStatelessMeta, META } from "../eras/stateless.js";
import { isStatelessVersion } from "../eras/versions.js";
import { ErrorCode } from "../errors.js";
import { type Awaitable, isObject, isPromiseLike, type RequestId } from "../types.js";
import { bodyRefused, NONE } from "./answers.js";
import { acceptsJsonAndSse, isJsonContentType } from "./guard.js";
import { checkHeaders } from "./headers.js";
import type { BodyCount } from "./limits.js";
import { type Answer, Reply } from "./reply.js";
import { type BodyResult, header, readBody } from "./request.js";
import { StatelessExchange, type StatelessOptions, validId } from "./stateless-exchange.js";

const VERSION_KEY = META.protocolVersion;
const noop = () => {};
/** The options of a request's own connection without credentials: one object for them all. */
const UNSENT: ConnectionOptions = Object.freeze({ send: noop });
const CAPABILITIES_KEY = META.clientCapabilities;

/** Whether `MCP-Protocol-Version` names a stateless revision (an unknown one is refused on the session path). */
export function isStatelessHeader(value: string | null): boolean {
  return value !== null && isStatelessVersion(value.trim());
}

/** Whether a parsed body is a request of the 2026-07-28 era: a `server/discover` probe, or the era's `_meta`. */
export function isStatelessBody(message: unknown): boolean {
  if (!isObject(message)) return false;
  return (
    message.method === "server/discover" ||
    (isObject(message.params) && hasStatelessMeta(message.params._meta))
  );
}

/** An error answer with the status the revision gives it; `id` when the request's id could be read. */
function fail(
  status: number,
  id: RequestId | undefined,
  code: number,
  message: string,
  extra?: { readonly [name: string]: string },
): Reply {
  const body =
    id === undefined
      ? { jsonrpc: "2.0", error: { code, message } }
      : { jsonrpc: "2.0", id, error: { code, message } };
  return new Reply(status, { "content-type": "application/json", ...extra }, JSON.stringify(body));
}

/** @internal — the 2026-07-28 pipeline of one handler. */
export class StatelessHttp {
  readonly #o: StatelessOptions;
  /** Connections of the listen streams open. */
  readonly #listening = new Set<Connection>();

  constructor(o: StatelessOptions) {
    this.#o = o;
  }

  /**
   * Graceful teardown: every request still running that belongs to no session ends gracefully (see
   * `server.endGracefully`: an open listen gets its final result) before the streams close.
   */
  close(): void {
    for (const connection of this.#o.drain.connections()) this.#o.server.endGracefully(connection);
  }

  /** GET and DELETE have no meaning in the revision. */
  notAllowed(): Reply {
    return fail(
      405,
      undefined,
      ErrorCode.InvalidRequest,
      "Method Not Allowed: 2026-07-28 requests use POST",
      {
        allow: "POST",
      },
    );
  }

  /**
   * A POST (`count`: it, its credentials and its body's count) whose headers named the revision
   * (`version`, its `MCP-Protocol-Version` as the route read it): media types and body are checked
   * here, with its codes.
   */
  post(version: string, count: BodyCount): Awaitable<Answer> {
    const request = count.request;
    const accept = header(request, "accept");
    if (!acceptsJsonAndSse(accept)) {
      return fail(
        406,
        undefined,
        ErrorCode.InvalidRequest,
        "Not Acceptable: Accept must list application/json and text/event-stream",
      );
    }
    if (!isJsonContentType(header(request, "content-type"))) {
      return fail(
        415,
        undefined,
        ErrorCode.InvalidRequest,
        "Unsupported Media Type: Content-Type must be application/json",
      );
    }
    // the answer is returned, not awaited: the body's text must not live on while the request runs (a listen runs long)
    const result = readBody(request, this.#o.maxBodyBytes, count);
    if (!isPromiseLike(result)) return this.#parse(count, version, result);
    return result.then(
      (r) => this.#parse(count, version, r),
      () => this.#parse(count, version, undefined),
    );
  }

  /** A POST's body as read (undefined: it could not be): its bytes come back, and it is parsed and served, or refused. */
  #parse(count: BodyCount, version: string, body: BodyResult | undefined): Awaitable<Answer> {
    count.end();
    if (body === undefined || (!body.ok && body.reason === "not-utf8"))
      return fail(400, undefined, ErrorCode.ParseError, "Parse error: the body is not UTF-8 text");
    if (!body.ok && body.reason === "limit") return bodyRefused(body.error);
    if (!body.ok) {
      return fail(
        413,
        undefined,
        ErrorCode.InvalidRequest,
        `Payload Too Large: the body must not exceed ${this.#o.maxBodyBytes} bytes`,
      );
    }
    let message: unknown;
    try {
      message = JSON.parse(body.text);
    } catch {
      return fail(400, undefined, ErrorCode.ParseError, "Parse error: the message is not valid JSON");
    }
    return this.serve(count.request, message, count.auth, version);
  }

  /**
   * Validates one parsed message against the revision's rules and its headers (`version`: its
   * `MCP-Protocol-Version`), then answers it.
   */
  serve(
    request: Request,
    message: unknown,
    auth: AuthInfo | undefined,
    version: string | null,
  ): Awaitable<Answer> {
    if (!isObject(message)) {
      const what = Array.isArray(message)
        ? "batches are not part of 2026-07-28"
        : "a message must be a JSON object";
      return fail(400, undefined, ErrorCode.InvalidRequest, `Invalid Request: ${what}`);
    }
    const id = validId(message.id);
    const method = message.method;
    if (message.jsonrpc !== "2.0")
      return fail(400, id, ErrorCode.InvalidRequest, 'Invalid Request: jsonrpc must be "2.0"');
    if (typeof method !== "string") {
      const response = "result" in message || "error" in message;
      const why = response ? "clients do not send responses in 2026-07-28" : "method must be a string";
      return fail(400, response ? undefined : id, ErrorCode.InvalidRequest, `Invalid Request: ${why}`);
    }
    // nothing reaches a client outside its own POST
    const connection = this.#o.server.connect(auth ? { send: noop, auth } : UNSENT);
    this.#o.limits.bind(connection, request, auth);
    if (!("id" in message)) {
      // no notification is defined for HTTP in this revision; one that arrives is accepted
      const options = this.#o.server.observer ? { stateless: true, carrier: request } : { stateless: true };
      return this.#o.server.handle(message, connection, options).then(() => {
        connection.close();
        return new Reply(202, NONE, null);
      });
    }
    const refusal = this.#refusal(request, version, id, method, message.params);
    if (refusal) {
      connection.close();
      return refusal;
    }
    if (method !== "subscriptions/listen") return this.#exchange(request, message, connection, auth);
    if (this.#listening.size >= this.#o.maxListens) {
      connection.close();
      return fail(503, id, ErrorCode.InternalError, "Service Unavailable: too many listen streams are open", {
        "retry-after": "5",
      });
    }
    return this.#exchange(request, message, connection, auth, true);
  }

  #refusal(
    request: Request,
    version: string | null,
    id: RequestId | undefined,
    method: string,
    params: unknown,
  ): Reply | undefined {
    if (id === undefined)
      return fail(
        400,
        undefined,
        ErrorCode.InvalidRequest,
        "Invalid Request: id must be a string or a number",
      );
    const p = params ?? {};
    if (!isObject(p))
      return fail(400, id, ErrorCode.InvalidParams, "Invalid params: params must be an object");
    const meta = p._meta;
    if (!isObject(meta) || typeof meta[VERSION_KEY] !== "string" || !isObject(meta[CAPABILITIES_KEY])) {
      return fail(
        400,
        id,
        ErrorCode.InvalidParams,
        `Invalid params: _meta must carry "${VERSION_KEY}" (a string) and "${CAPABILITIES_KEY}" (an object)`,
      );
    }
    const mismatch = (why: string) => fail(400, id, ErrorCode.HeaderMismatch, `Header mismatch: ${why}`);
    if (version === null) return mismatch("the MCP-Protocol-Version header is required");
    if (version.trim() !== meta[VERSION_KEY]) {
      return mismatch(
        `the MCP-Protocol-Version header ${JSON.stringify(version.trim())} does not match _meta ${JSON.stringify(meta[VERSION_KEY])}`,
      );
    }
    const mirrored =
      method === "tools/call" && typeof p.name === "string" ? this.#o.server.toolHeaders(p.name) : [];
    const why = checkHeaders((name) => header(request, name), method, p, mirrored);
    return why === undefined ? undefined : mismatch(why);
  }

  /**
   * Runs the request on its own connection: JSON, or SSE from the first related notification on. A
   * request answered synchronously is answered without a promise.
   */
  #exchange(
    request: Request,
    message: object,
    connection: Connection,
    auth: AuthInfo | undefined,
    listen = false,
  ): Awaitable<Answer> {
    if (listen) this.#listening.add(connection);
    return new StatelessExchange(this.#o, request, message, connection, auth).run(
      listen ? this.#listening : undefined,
    );
  }
}
