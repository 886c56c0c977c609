/**
 * Observers: what one watches (every message a client sends, what the server sends, connections,
 * change events, transports' refusals), and several composed into the one the core calls.
 */
import type { ChangeEvent } from "../bus.js";
import type { Connection, ConnectionOptions } from "../connection.js";
import {
  type Awaitable,
  isPromiseLike,
  type JsonRpcMessage,
  type JsonRpcResponse,
  type Params,
  type RequestId,
} from "../types.js";

// An observer (telemetry, `picomcp/otel`) watches every message a client sends (protocol errors
// included), what the server sends and the answers it gets back, connections opening, the change
// events this process publishes and transports' refusals. With none added, the core reads one
// property per message and allocates nothing for it; with one, it calls that one as it is; several
// are composed into one (composeObservers) when an extension comes or goes, never per message.

/** What carried a message: `"pipe"` (stdio) or the HTTP request; undefined in memory. */
export type Carrier = "pipe" | Request;

/** A message from the client, as it arrives. */
export interface MessageStart {
  readonly method: string;
  /** Its id; undefined for a notification. */
  readonly id: RequestId | undefined;
  /** Its params (an empty object when it had none, or malformed ones). */
  readonly params: Params;
  readonly connection: Connection;
  readonly carrier: Carrier | undefined;
}

/** One message under observation, from its arrival to its answer. */
export interface MessageObservation {
  /** Runs the message's handling (in the observer's context, say) and returns what `run` returns. */
  readonly run: <T>(run: () => T) => T;
  /** Where the request's related messages go (progress, logs, requests to the client), given where they went. */
  readonly send?: (send: (message: JsonRpcMessage) => void) => (message: JsonRpcMessage) => void;
  /** The handling is over: its answer (undefined for a notification, a cancelled request, or a throw) → the answer to send. */
  readonly end: (answer: JsonRpcResponse | undefined) => JsonRpcResponse | undefined;
}

/** What an observer watches; every hook is optional. */
export interface Observer {
  /** A request or notification arrived; undefined leaves it unobserved. */
  readonly message?: (start: MessageStart) => MessageObservation | undefined;
  /** The client answered a request of the server (before the waiting call resolves). */
  readonly response?: (message: JsonRpcResponse, connection: Connection) => void;
  /** A transport opens a connection: the options it is made with (its `send` wrapped, say). */
  readonly connect?: (options: ConnectionOptions) => ConnectionOptions;
  /** This process published a change event (a list changed, a resource was updated, a task changed). */
  readonly change?: (event: ChangeEvent) => void;
  /** A transport refused a message at one of its limits (`reason`: low-cardinality, such as `payload_too_large`). */
  readonly refused?: (reason: string, network: "pipe" | "tcp") => void;
}

/**
 * The one observer standing for `list`: undefined for none, the one itself, else one that calls each
 * in order and has only the hooks some of them have (so that a transport that asks whether there is
 * a `refused` hook is told the truth).
 */
export function composeObservers(list: readonly Observer[]): Observer | undefined {
  if (list.length <= 1) return list[0];
  const all = [...list];
  const having = (hook: keyof Observer) => all.filter((o) => o[hook] !== undefined);
  const [message, response, connect, change, refused] = (
    ["message", "response", "connect", "change", "refused"] as const
  ).map(having) as [Observer[], Observer[], Observer[], Observer[], Observer[]];
  const composed: { -readonly [K in keyof Observer]: Observer[K] } = {};
  if (message.length)
    composed.message = (start) => {
      let first: MessageObservation | undefined;
      let more: MessageObservation[] | undefined;
      for (const o of message) {
        const m = o.message!(start);
        if (m === undefined) continue;
        if (first === undefined) first = m;
        else if (more === undefined) more = [first, m];
        else more.push(m);
      }
      return more ? nested(more) : first;
    };
  if (response.length)
    composed.response = (m, conn) => {
      for (const o of response) o.response!(m, conn);
    };
  if (connect.length)
    composed.connect = (options) => {
      // the first added wraps last: it stands nearest the wire, as its `run` stands outermost
      for (const o of connect) options = o.connect!(options);
      return options;
    };
  if (change.length)
    composed.change = (event) => {
      for (const o of change) o.change!(event);
    };
  if (refused.length)
    composed.refused = (reason, network) => {
      for (const o of refused) o.refused!(reason, network);
    };
  return composed;
}

type Answer = Awaitable<JsonRpcResponse | undefined>;

/** `run` (a message's handling) in `o`'s context, its answer, or its failure as no answer, told to `o.end`. */
export function observedRun(o: MessageObservation, run: () => Answer): Answer {
  return o.run(() => {
    let answer: Answer;
    try {
      answer = run();
    } catch (error) {
      o.end(undefined);
      throw error;
    }
    if (!isPromiseLike(answer)) return o.end(answer);
    return answer.then(
      (a) => o.end(a),
      (error: unknown) => {
        o.end(undefined);
        throw error;
      },
    );
  });
}

/**
 * Several observations of one message, the first outermost: each `run` inside the one before it, each
 * `end` inside its own `run` once the ones within have ended (the innermost's is the one the
 * dispatcher calls), and each `send` wrapped by the one before it, nearer the wire.
 */
function nested(all: readonly MessageObservation[]): MessageObservation {
  const last = all.length - 1;
  const level = (i: number, run: () => Answer): Answer => {
    const o = all[i]!;
    if (i === last) return o.run(run);
    return observedRun(o, () => level(i + 1, run));
  };
  // the dispatcher runs only its answer through here (see dispatch/envelope.ts)
  const run = <T>(run: () => T): T => level(0, run as () => Answer) as T;
  const end = (answer: JsonRpcResponse | undefined) => all[last]!.end(answer);
  if (!all.some((o) => o.send !== undefined)) return { run, end };
  const send = (to: (message: JsonRpcMessage) => void) => {
    for (const o of all) if (o.send) to = o.send(to);
    return to;
  };
  return { run, send, end };
}

/** Where a throwing observer hook is reported: its hook's name and its extension's id. */
export type ObserverFailed = (error: unknown, hook: string, id: string) => void;

/**
 * `o` with every hook guarded, made once when its extension is added: a hook that throws is reported
 * and the server goes on as without it (the message unobserved, the answer kept, the send done once).
 * The dispatcher's path with no observer is untouched.
 */
export function guardObserver(o: Observer, id: string, failed: ObserverFailed): Observer {
  // made on `o` (its hooks called as its methods), so that what it holds beyond its hooks stays readable
  const g = Object.create(o) as { -readonly [K in keyof Observer]: Observer[K] };
  if (o.message)
    g.message = (start) => {
      let m: MessageObservation | undefined;
      try {
        m = o.message!(start);
      } catch (error) {
        failed(error, "message", id);
        return undefined;
      }
      return m && guardObservation(m, id, failed);
    };
  if (o.response)
    g.response = (m, conn) => {
      try {
        o.response!(m, conn);
      } catch (error) {
        failed(error, "response", id);
      }
    };
  if (o.connect)
    g.connect = (options) => {
      try {
        return o.connect!(options);
      } catch (error) {
        failed(error, "connect", id);
        return options;
      }
    };
  if (o.change)
    g.change = (event) => {
      try {
        o.change!(event);
      } catch (error) {
        failed(error, "change", id);
      }
    };
  if (o.refused)
    g.refused = (reason, network) => {
      try {
        o.refused!(reason, network);
      } catch (error) {
        failed(error, "refused", id);
      }
    };
  return g;
}

function guardObservation(m: MessageObservation, id: string, failed: ObserverFailed): MessageObservation {
  const run = <T>(inner: () => T): T => {
    let ran = false;
    let threw = false;
    let out: T | undefined;
    try {
      return m.run(() => {
        ran = true;
        try {
          out = inner();
        } catch (error) {
          threw = true;
          throw error;
        }
        return out;
      });
    } catch (error) {
      if (threw) throw error; // the handling's own, as without the observer
      failed(error, "run", id);
      return ran ? (out as T) : inner();
    }
  };
  const end = (answer: JsonRpcResponse | undefined) => {
    try {
      return m.end(answer);
    } catch (error) {
      failed(error, "end", id);
      return answer;
    }
  };
  if (!m.send) return { run, end };
  const send = (next: (message: JsonRpcMessage) => void) => {
    let sent = false;
    let wrapped: (message: JsonRpcMessage) => void;
    try {
      wrapped = m.send!((message) => {
        sent = true;
        next(message);
      });
    } catch (error) {
      failed(error, "send", id);
      return next;
    }
    return (message: JsonRpcMessage) => {
      sent = false;
      try {
        wrapped(message);
      } catch (error) {
        failed(error, "send", id);
        if (!sent) next(message);
      }
    };
  };
  return { run, send, end };
}
