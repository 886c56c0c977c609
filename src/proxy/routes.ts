/**
 * Which downstream request a message of the remote belongs to: the calls in flight, each with a key;
 * over HTTP, the key rides the request to the proxy's own fetch (taken off there, so the remote never
 * sees it) and names the response stream, and a request or log message the remote sends on that stream
 * is that call's. Over stdio nothing relates them: such a request is refused and such a log message
 * dropped, unless the proxy opted into guessing (`guessStdioCaller`), and even then only while every
 * call in flight is one caller's.
 */

import type { FetchLike } from "@modelcontextprotocol/client";
import type { Context } from "../context.js";

/** One downstream request being forwarded. */
export interface Call {
  readonly key: string;
  readonly ctx: Context;
  /** Ends the forwarded request with `error` (a 2026-07-28 input round the downstream must answer first). */
  readonly fail: (error: unknown) => void;
}

/** The `_meta` key that names a call on its way to the proxy's fetch. */
const MARK = "picomcp.proxy/call";

type Json = { [key: string]: unknown };

/** A log message's identity, whatever order the client parses its fields in. */
function logKey(params: unknown): string {
  const p = (params ?? {}) as { level?: unknown; logger?: unknown; data?: unknown };
  return JSON.stringify([p.level, p.logger, p.data]);
}

/** The calls in flight, and what the remote sent on each one's stream. */
export class Routes {
  /** Whether messages are related by the stream they come on (HTTP): then an unrelated one is never guessed. */
  readonly exact: boolean;
  /** Over stdio: whether to guess that the caller of every call in flight is the one meant. */
  readonly guess: boolean;
  readonly #calls = new Map<string, Call>();
  /** The remote's request id → the key of the call whose stream it came on. */
  readonly #requests = new Map<unknown, string>();
  /** A log message (its `logKey`) → the key of the call whose stream it came on. */
  readonly #logs = new Map<string, string>();
  #next = 0;

  constructor(exact: boolean, guess = false) {
    this.exact = exact;
    this.guess = guess;
  }

  get size(): number {
    return this.#calls.size;
  }

  open(ctx: Context, fail: (error: unknown) => void): Call {
    const call = { key: String(++this.#next), ctx, fail };
    this.#calls.set(call.key, call);
    return call;
  }

  close(call: Call): void {
    this.#calls.delete(call.key);
    for (const [id, key] of this.#requests) if (key === call.key) this.#requests.delete(id);
    for (const [log, key] of this.#logs) if (key === call.key) this.#logs.delete(log);
  }

  /** `params` with the call's key for the proxy's fetch (over HTTP; over stdio it would reach the remote). */
  mark(params: Json, call: Call): Json {
    if (!this.exact) return params;
    const meta = params._meta as Json | undefined;
    return { ...params, _meta: { ...meta, [MARK]: call.key } };
  }

  /** The call the remote's request `id` belongs to, else undefined. */
  forRequest(id: unknown): Call | undefined {
    if (this.exact) {
      const key = this.#requests.get(id);
      this.#requests.delete(id);
      return key === undefined ? undefined : this.#calls.get(key);
    }
    return this.#lone();
  }

  /** The call a log message with `params` belongs to, else undefined (it is then dropped). */
  forLog(params: unknown): Call | undefined {
    if (this.exact) {
      const text = logKey(params);
      const key = this.#logs.get(text);
      this.#logs.delete(text);
      return key === undefined ? undefined : this.#calls.get(key);
    }
    return this.#lone();
  }

  /**
   * The guess over stdio, when opted into: the newest call in flight, if every call in flight is one
   * caller's (`ctx.caller`). It may still be a call other than the one the remote means (a message of
   * a call that just finished or was cancelled reaches that caller's next call): one caller's only.
   */
  #lone(): Call | undefined {
    if (!this.guess) return undefined;
    let last: Call | undefined;
    for (const call of this.#calls.values()) {
      if (last && last.ctx.caller !== call.ctx.caller) return undefined;
      last = call;
    }
    return last;
  }

  /** The fetch the HTTP transport is given: takes the call's key off each request, and reads its response stream. */
  tap(base: FetchLike | undefined): FetchLike {
    return async (url, init) => {
      let key: string | undefined;
      if (init?.method === "POST" && typeof init.body === "string" && init.body.includes(MARK)) {
        const message = JSON.parse(init.body) as { params?: { _meta?: Json } };
        const meta = message.params?._meta;
        if (meta && typeof meta[MARK] === "string") {
          key = meta[MARK];
          delete meta[MARK];
          if (Object.keys(meta).length === 0) delete message.params!._meta;
          init = { ...init, body: JSON.stringify(message) };
        }
      }
      const response = await (base ?? fetch)(url, init);
      const type = response.headers.get("content-type") ?? "";
      if (key === undefined || !response.body || !type.startsWith("text/event-stream")) return response;
      return new Response(response.body.pipeThrough(this.#scanner(key)), {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    };
  }

  /** Passes an SSE stream through unchanged, noting the requests and log messages on it as `key`'s. */
  #scanner(key: string): TransformStream<Uint8Array, Uint8Array> {
    const decoder = new TextDecoder();
    let line = "";
    let data: string[] = [];
    const event = () => {
      if (data.length === 0) return;
      let message: { id?: unknown; method?: unknown; params?: unknown };
      try {
        message = JSON.parse(data.join("\n"));
      } catch {
        return;
      } finally {
        data = [];
      }
      if (typeof message !== "object" || message === null || typeof message.method !== "string") return;
      if (message.id !== undefined) this.#requests.set(message.id, key);
      else if (message.method === "notifications/message") this.#logs.set(logKey(message.params), key);
    };
    return new TransformStream({
      transform: (chunk, out) => {
        const text = line + decoder.decode(chunk, { stream: true });
        const lines = text.split(/\r\n|\r|\n/);
        line = lines.pop() ?? "";
        for (const l of lines) {
          if (l === "") event();
          else if (l.startsWith("data:")) data.push(l.slice(l.startsWith("data: ") ? 6 : 5));
        }
        out.enqueue(chunk);
      },
    });
  }
}
