/**
 * The observer `instrument` adds: a SERVER span per message a client sends, a CLIENT span per request
 * (and notification) the server sends, the answers that end them, sessions, change events and
 * refusals, each recorded in the metrics.
 */
import {
  type Attributes,
  type Context,
  context,
  isSpanContextValid,
  type Link,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { ChangeEvent } from "../bus.js";
import { type Connection, type ConnectionOptions, sessionSlot } from "../connection.js";
import type { MessageObservation, MessageStart, Observer } from "../extension.js";
import {
  isObject,
  type JsonRpcMessage,
  type JsonRpcResponse,
  type Params,
  type RequestId,
} from "../types.js";
import {
  A,
  baseAttributes,
  cap,
  clientAttributes,
  createdTask,
  json,
  type Kind,
  type Kinds,
  metaOf,
  type Network,
  networkOf,
  shortString,
  statusMessage,
  targetOf,
  uriAttribute,
  versionOf,
} from "./attributes.js";
import { type Instruments, Points } from "./metrics.js";
import type { MetaPropagation } from "./propagation.js";
import type { TaskSpans } from "./tasks.js";

/** What the observer records beyond the defaults (see `InstrumentOptions`). */
export interface Recording {
  readonly toolArguments: boolean;
  readonly toolResults: boolean;
  readonly resourceUri: boolean;
  /** Only while `resourceUri` is on too. */
  readonly resourceUriInMetrics: boolean;
  readonly redactUri: boolean;
  readonly sessionId: boolean;
  readonly notifications: boolean;
}

/** Notifications the server sends that get a span of their own (list changes get one per change). */
const OWN_SPAN = new Set(["notifications/progress", "notifications/message"]);
const RELATED_TASK = "io.modelcontextprotocol/related-task";
const RESOURCE_METHODS = new Set(["resources/read", "resources/subscribe", "resources/unsubscribe"]);

/** A request the server sent, waiting for its answer. */
interface Pending {
  readonly span: Span;
  readonly owner: Set<RequestId>;
}

/** The observer of one instrumented server. */
export class Telemetry implements Observer {
  readonly tracer: Tracer;
  readonly instruments: Instruments;
  readonly propagation: MetaPropagation;
  readonly tasks: TaskSpans;
  readonly recording: Recording;
  /** Span names, sampler attributes and series per method and target the server knows, made once. */
  readonly kinds: Kinds;
  /** The metrics' attribute sets, made once per combination. */
  readonly points = new Points();
  readonly #pending = new Map<RequestId, Pending>();
  /** Messages already seen on their way out (a request's are, once more, on its connection's way). */
  readonly #seen = new WeakSet<object>();
  /** A connection's requests still waiting, failed when it closes. */
  readonly outboundSlot = sessionSlot(
    "picomcp/otel requests",
    () => new Set<RequestId>(),
    (ids) => this.#fail(ids, "connection_closed"),
  );
  /** A session, from its `initialize` on: its duration and count when it closes. */
  readonly sessionSlot = sessionSlot(
    "picomcp/otel session",
    () => ({ start: performance.now(), attributes: {} as Attributes }),
    (s) => {
      this.instruments.session.record((performance.now() - s.start) / 1000, s.attributes);
      this.instruments.sessions.add(-1, s.attributes);
    },
  );

  /** Made of its parts: what it records with, and what it records (`recording`, the options). */
  constructor(
    parts: Pick<Telemetry, "tracer" | "instruments" | "propagation" | "tasks" | "recording" | "kinds">,
  ) {
    this.tracer = parts.tracer;
    this.instruments = parts.instruments;
    this.propagation = parts.propagation;
    this.tasks = parts.tasks;
    this.recording = parts.recording;
    this.kinds = parts.kinds;
  }

  message(start: MessageStart): MessageObservation {
    return new Observed(this, start);
  }

  response(message: JsonRpcResponse, _connection: Connection): void {
    const id = message.id;
    const pending = id == null ? undefined : this.#pending.get(id);
    if (!pending) return;
    this.#pending.delete(id!);
    pending.owner.delete(id!);
    if ("error" in message && isObject(message.error)) {
      const code = String(message.error.code);
      pending.span.setAttributes({ [A.errorType]: code, [A.statusCode]: code });
      const text = statusMessage(message.error.message, undefined, false);
      pending.span.setStatus(
        text ? { code: SpanStatusCode.ERROR, message: text } : { code: SpanStatusCode.ERROR },
      );
    }
    pending.span.end();
  }

  connect(options: ConnectionOptions): ConnectionOptions {
    const owner = new Set<RequestId>();
    const send = options.send;
    return {
      ...options,
      // what reaches the connection outside a request's own stream: a 2025-11-25 task's requests
      send: (m) => send(this.#seen.has(m) ? m : this.outbound(m, undefined, owner, {})),
      onClose: () => {
        this.#fail(owner, "connection_closed");
        options.onClose?.();
      },
    };
  }

  change(event: ChangeEvent): void {
    if (event.type === "task") {
      this.tasks.changed(event.task);
      return;
    }
    const method =
      event.type === "list_changed"
        ? `notifications/${event.kind}/list_changed`
        : "notifications/resources/updated";
    const attributes: Attributes = { [A.method]: method };
    if (event.type === "resource_updated" && this.recording.resourceUri)
      attributes[A.resourceUri] = uriAttribute(event.uri, this.recording.redactUri);
    this.tracer.startSpan(method, { kind: SpanKind.CLIENT, attributes }, context.active()).end();
  }

  refused(reason: string, network: "pipe" | "tcp"): void {
    this.instruments.refused.add(1, { [A.errorType]: reason, [A.transport]: network });
  }

  /**
   * A message on its way to the client, under `parent` (a request's span; else the task it names, or
   * the active context): a request gets a CLIENT span until its answer, progress and log messages one
   * of their own; both carry their span's context in `_meta`. Returns what to send.
   */
  outbound(
    m: JsonRpcMessage,
    parent: Context | undefined,
    owner: Set<RequestId>,
    base: Attributes,
  ): JsonRpcMessage {
    if (!isObject(m) || typeof m.method !== "string") return m;
    const message = m as { id?: unknown; method: string; params?: unknown };
    const params = isObject(message.params) ? message.params : undefined;
    if (message.method === "notifications/cancelled") {
      const target = params?.requestId;
      if (typeof target === "string" || typeof target === "number")
        this.#fail(new Set([target]), "cancelled");
      return m;
    }
    const isRequest = typeof message.id === "string" || typeof message.id === "number";
    if (!isRequest && !(this.recording.notifications && OWN_SPAN.has(message.method))) return m;
    const attributes: Attributes = { ...base, [A.method]: message.method };
    if (isRequest) attributes[A.requestId] = String(message.id);
    const under = parent ?? this.#parentOf(params);
    const span = this.tracer.startSpan(message.method, { kind: SpanKind.CLIENT, attributes }, under);
    // the span's context, with the baggage the request brought
    const out = { ...message, params: this.propagation.inject(params, trace.setSpan(under, span)) };
    this.#seen.add(out);
    if (isRequest) {
      const id = message.id as RequestId;
      this.#pending.set(id, { span, owner });
      owner.add(id);
    } else span.end();
    return out as JsonRpcMessage;
  }

  #parentOf(params: Params | undefined): Context {
    const active = context.active();
    const task = params && metaOf(params)?.[RELATED_TASK];
    const id = isObject(task) ? shortString(task.taskId) : undefined;
    return (id !== undefined && this.tasks.context(id, active)) || active;
  }

  #fail(ids: Set<RequestId>, errorType: string): void {
    for (const id of ids) {
      const pending = this.#pending.get(id);
      if (!pending) continue;
      this.#pending.delete(id);
      pending.owner.delete(id);
      pending.span.setAttribute(A.errorType, errorType);
      pending.span.setStatus({ code: SpanStatusCode.ERROR });
      pending.span.end();
    }
  }
}

/** One message from the client, from its arrival to its answer. */
class Observed implements MessageObservation {
  readonly #t: Telemetry;
  readonly #start: MessageStart;
  readonly #kind: Kind;
  readonly #network: Network;
  readonly #version: string | undefined;
  readonly #sessionId: string | undefined;
  readonly #span: Span;
  readonly #parent: Context;
  readonly #context: Context;
  readonly #began = performance.now();
  #base: Attributes | undefined;

  constructor(t: Telemetry, start: MessageStart) {
    this.#t = t;
    this.#start = start;
    const { method, params, connection, carrier } = start;
    const kind = t.kinds.of(method, targetOf(method, params));
    this.#kind = kind;
    this.#network = networkOf(carrier);
    this.#version = versionOf(connection, params);
    this.#sessionId =
      t.recording.sessionId && connection.peek(t.sessionSlot) !== undefined ? connection.id : undefined;
    let links: Link[] | undefined;
    // the transport's span (an instrumented HTTP server's) is linked: the client's MCP span is the parent
    const ambient = trace.getSpanContext(context.active());
    if (ambient && isSpanContextValid(ambient)) links = [{ context: ambient }];
    const taskId = method.startsWith("tasks/") ? shortString(params.taskId) : undefined;
    const task = taskId === undefined ? undefined : t.tasks.link(taskId);
    if (task) links = [...(links ?? []), { context: task }];
    this.#parent = t.propagation.extract(params);
    // a sampler decides on the method and its target; the rest is built only for a span that records
    const options = { kind: SpanKind.SERVER, attributes: kind.start, ...(links && { links }) };
    const span = t.tracer.startSpan(kind.name, options, this.#parent);
    this.#span = span;
    if (span.isRecording()) span.setAttributes(this.#attributes());
    // a span with no valid context (the API's no-op tracer at a root) changes nothing in the context
    this.#context = isSpanContextValid(span.spanContext()) ? trace.setSpan(this.#parent, span) : this.#parent;
    if (method === "subscriptions/listen")
      t.instruments.listens.add(1, t.points.session(this.#version, this.#network));
  }

  /** The span's attributes beyond the kind's. */
  #attributes(): Attributes {
    const { id, params, carrier, method } = this.#start;
    const r = this.#t.recording;
    const attributes = { ...this.#network.attributes, ...this.#baseAttributes() };
    if (id !== undefined) attributes[A.requestId] = cap(String(id));
    clientAttributes(carrier, attributes);
    if (method === "tools/call" && r.toolArguments && params.arguments !== undefined) {
      const args = json(params.arguments);
      if (args !== undefined) attributes[A.toolArguments] = cap(args);
    }
    const uri = params.uri;
    if (r.resourceUri && typeof uri === "string" && RESOURCE_METHODS.has(method))
      attributes[A.resourceUri] = uriAttribute(uri, r.redactUri);
    return attributes;
  }

  /** What a request's outbound spans share with it: revision, session, transport. */
  #baseAttributes(): Attributes {
    this.#base ??= baseAttributes(this.#version, this.#sessionId, this.#network);
    return this.#base;
  }

  run<T>(run: () => T): T {
    const ctx = this.#context;
    return ctx === context.active() ? run() : context.with(ctx, run);
  }

  send(send: (message: JsonRpcMessage) => void): (message: JsonRpcMessage) => void {
    const t = this.#t;
    return (m) =>
      send(t.outbound(m, this.#context, this.#start.connection.slot(t.outboundSlot), this.#baseAttributes()));
  }

  end(answer: JsonRpcResponse | undefined): JsonRpcResponse | undefined {
    const t = this.#t;
    const span = this.#span;
    const recording = span.isRecording();
    const { method, connection } = this.#start;
    let errorType: string | undefined;
    let code: string | undefined;
    let result: Params | undefined;
    if (answer !== undefined && "error" in answer) {
      code = String(answer.error.code);
      errorType = code;
      const message = statusMessage(answer.error.message, this.#start.params.uri, t.recording.redactUri);
      span.setStatus(
        message === undefined ? { code: SpanStatusCode.ERROR } : { code: SpanStatusCode.ERROR, message },
      );
    } else if (answer !== undefined && isObject(answer.result)) {
      result = answer.result;
      if (result.isError === true) {
        errorType = "tool_error";
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
    }
    let version = this.#version;
    if (method === "initialize" && result !== undefined && connection.state === "ready") {
      version = connection.protocolVersion;
      if (recording) span.setAttribute(A.protocolVersion, connection.protocolVersion!);
      if (recording && t.recording.sessionId) span.setAttribute(A.sessionId, connection.id);
      this.#opened(connection, version);
    }
    if (recording && errorType !== undefined) {
      span.setAttribute(A.errorType, errorType);
      if (code !== undefined) span.setAttribute(A.statusCode, code);
    } else if (recording && result && method === "tools/call" && t.recording.toolResults) {
      const { _meta, ...shown } = result;
      const text = json(shown);
      if (text !== undefined) span.setAttribute(A.toolResult, cap(text));
    }
    let out = answer;
    if (result?.resultType === "input_required" && isObject(result.inputRequests))
      out = {
        ...answer!,
        result: { ...result, inputRequests: this.#asked(result.inputRequests) },
      } as JsonRpcResponse;
    const taskId = createdTask(result);
    if (taskId !== undefined) t.tasks.created(taskId, span, this.#parent, this.#kind.request.target);
    span.end();
    this.#record(version, errorType, code);
    return out;
  }

  /** 2026-07-28: each input request of the result, as a CLIENT span whose context its `_meta` carries. */
  #asked(requests: Params): Params {
    const out: Params = {};
    for (const [key, request] of Object.entries(requests)) {
      if (!isObject(request) || typeof request.method !== "string") {
        out[key] = request;
        continue;
      }
      const attributes = { ...this.#baseAttributes(), [A.method]: request.method };
      const span = this.#t.tracer.startSpan(
        request.method,
        { kind: SpanKind.CLIENT, attributes },
        this.#context,
      );
      out[key] = {
        ...request,
        params: this.#t.propagation.inject(request.params, trace.setSpan(this.#context, span)),
      };
      span.end();
    }
    return out;
  }

  #opened(connection: Connection, version: string | undefined): void {
    const session = connection.slot(this.#t.sessionSlot);
    session.attributes = this.#t.points.session(version, this.#network);
    this.#t.instruments.sessions.add(1, session.attributes);
  }

  #record(version: string | undefined, errorType: string | undefined, code: string | undefined): void {
    const t = this.#t;
    const { method, id, params } = this.#start;
    // a method the server registered but does not serve this client is no name of its own either
    const series =
      code === "-32601" ? t.kinds.other : id === undefined ? this.#kind.notification : this.#kind.request;
    let point = t.points.operation(series, this.#network, { version, errorType, code });
    if (t.recording.resourceUriInMetrics && typeof params.uri === "string" && RESOURCE_METHODS.has(method))
      point = { ...point, [A.resourceUri]: uriAttribute(params.uri, t.recording.redactUri) };
    t.instruments.operation.record((performance.now() - this.#began) / 1000, point);
    if (method === "subscriptions/listen")
      t.instruments.listens.add(-1, t.points.session(version, this.#network));
  }
}
