/**
 * Task spans: one per task, from the answer that created it to its terminal status, linked to the
 * request that created it; `tasks/*` requests link to it. Its status changes are events on it, and
 * the task metrics count them.
 */
import {
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { isObject } from "../types.js";
import { A, cap } from "./attributes.js";
import type { Instruments } from "./metrics.js";

/** Finished tasks kept for links of later `tasks/*` requests, and early changes kept; the oldest go first. */
const KEPT = 10_000;
const TERMINAL = new Set(["completed", "failed", "cancelled"]);

interface LiveTask {
  readonly span: Span;
  readonly metric: Attributes;
  status: string;
}

/** A status change, as much of it as the span records (an early one is kept: the error's message capped). */
type Change = { readonly status: string; readonly code: string; readonly message: string | undefined };

function keep<K, V>(map: Map<K, V>, key: K, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > KEPT) map.delete(map.keys().next().value as K);
}

/** The tasks of one instrumented server. */
export class TaskSpans {
  readonly #tracer: Tracer;
  readonly #instruments: Instruments;
  readonly #live = new Map<string, LiveTask>();
  readonly #links = new Map<string, SpanContext>();
  // a task's first changes may be published before the answer that creates it is out
  readonly #early = new Map<string, Change>();

  constructor(tracer: Tracer, instruments: Instruments) {
    this.#tracer = tracer;
    this.#instruments = instruments;
  }

  /** A request's answer created task `taskId`: its span starts, in `parent`'s trace, linked to `request`. */
  created(taskId: string, request: Span, parent: Context, tool: string | undefined): void {
    if (this.#live.has(taskId) || this.#links.has(taskId)) return;
    const attributes: Attributes = {
      [A.method]: "tools/call",
      [A.taskId]: taskId,
      [A.taskStatus]: "working",
    };
    const metric: Attributes = {};
    if (tool !== undefined) {
      attributes[A.toolName] = tool;
      metric[A.toolName] = tool;
    }
    const links = [{ context: request.spanContext() }];
    const name = tool === undefined ? "task" : `task ${tool}`;
    const span = this.#tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes, links }, parent);
    const live: LiveTask = { span, metric, status: "working" };
    this.#live.set(taskId, live);
    keep(this.#links, taskId, span.spanContext());
    this.#instruments.tasks.add(1, { ...metric, [A.taskStatus]: "working" });
    const early = this.#early.get(taskId);
    if (early) {
      this.#early.delete(taskId);
      this.#move(taskId, live, early);
    }
  }

  /** A task changed (a change event of this process). */
  changed(task: { taskId: string; [key: string]: unknown }): void {
    const status = task.status;
    if (typeof status !== "string") return;
    const error = task.error;
    const code = isObject(error) && typeof error.code === "number" ? String(error.code) : "tool_error";
    const message = isObject(error) && typeof error.message === "string" ? cap(error.message) : undefined;
    const change = { status, code, message };
    const live = this.#live.get(task.taskId);
    if (live) this.#move(task.taskId, live, change);
    else if (!this.#links.has(task.taskId)) keep(this.#early, task.taskId, change);
  }

  /** The span context of task `taskId`, for a link (while it is kept). */
  link(taskId: string): SpanContext | undefined {
    return this.#links.get(taskId);
  }

  /** The context of task `taskId`'s span while it runs: the parent of what it sends the client. */
  context(taskId: string, base: Context): Context | undefined {
    const live = this.#live.get(taskId);
    return live && trace.setSpan(base, live.span);
  }

  #move(taskId: string, live: LiveTask, change: Change): void {
    const { status } = change;
    if (status === live.status) return;
    this.#instruments.tasks.add(-1, { ...live.metric, [A.taskStatus]: live.status });
    live.status = status;
    live.span.setAttribute(A.taskStatus, status);
    if (!TERMINAL.has(status)) {
      this.#instruments.tasks.add(1, { ...live.metric, [A.taskStatus]: status });
      live.span.addEvent("mcp.task.status", { [A.taskStatus]: status });
      return;
    }
    this.#instruments.tasksEnded.add(1, { ...live.metric, [A.taskStatus]: status });
    if (status === "failed") {
      const { code, message } = change;
      live.span.setAttribute(A.errorType, code);
      live.span.setStatus(
        message === undefined ? { code: SpanStatusCode.ERROR } : { code: SpanStatusCode.ERROR, message },
      );
    }
    live.span.end();
    this.#live.delete(taskId);
  }
}
