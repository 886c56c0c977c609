/**
 * The context a task's handler runs in: the request's, but for its signal (a cancelled task aborts
 * it), `task()` (which makes or gives the task) and its calls to the client, which go to the task's
 * client once the task exists (2026-07-28: as the task's input requests; 2025-11-25: naming the task).
 */
import type { ClientRequestOptions, Context, TaskHandle } from "../context.js";
import { refuse } from "../eras/input.js";
import { type AskChannel, elicit, roots, sample } from "../request/ask.js";
import type {
  ElicitFormParams,
  ElicitResult,
  ElicitUrlParams,
  Root,
  SampleParams,
  SampleResult,
} from "../types.js";
import { ContextView } from "../views/context-view.js";
import type { Live, TaskRunner } from "./task-runner.js";

/** 2025-11-25: the `_meta` key that ties a message to its task. */
export const RELATED_TASK = "io.modelcontextprotocol/related-task";

export class TaskContext extends ContextView {
  readonly #controller = new AbortController();
  readonly #runner: TaskRunner;
  /** What `task()` does: make the task (2026-07-28), or give the one made before the handler ran. */
  starter: ((options?: { statusMessage?: string }) => Promise<TaskHandle>) | undefined;
  #live: Live | undefined;
  #asking: AskChannel | undefined;

  constructor(base: Context, runner: TaskRunner) {
    super(base);
    this.#runner = runner;
    // the request cancelled before its task exists cancels the handler too
    const signal = base.signal;
    if (signal.aborted) this.#controller.abort(signal.reason);
    else signal.addEventListener("abort", () => this.#controller.abort(signal.reason), { once: true });
  }

  /** The task exists: from now on the handler's calls to the client go to it. */
  bind(live: Live): void {
    this.#live = live;
  }

  /** Stops the handler: aborts its `signal`. */
  abort(reason: unknown): void {
    this.#controller.abort(reason);
  }

  override get signal(): AbortSignal {
    return this.#controller.signal;
  }

  override task(options?: { statusMessage?: string }): Promise<TaskHandle | undefined> {
    return this.starter ? this.starter(options) : Promise.resolve(undefined);
  }

  override elicit(
    params: ElicitFormParams | ElicitUrlParams,
    options?: ClientRequestOptions,
  ): Promise<ElicitResult> {
    const asking = this.#channel();
    if (asking) return elicit(asking, params, options);
    return super.elicit(params, this.#related(options));
  }

  override sample(params: SampleParams, options?: ClientRequestOptions): Promise<SampleResult> {
    const asking = this.#channel();
    return asking ? sample(asking, params, options) : super.sample(params, this.#related(options));
  }

  override roots(options?: ClientRequestOptions): Promise<Root[]> {
    const asking = this.#channel();
    return asking ? roots(asking, options) : super.roots(this.#related(options));
  }

  /** 2026-07-28, once the task exists: its input requests, answered by `tasks/update`. */
  #channel(): AskChannel | undefined {
    const l = this.#live;
    if (l === undefined || !this.features.stateless) return undefined;
    this.#asking ??= {
      capabilities: this.client.capabilities,
      features: this.features,
      request: () => refuse(new Error("A 2026-07-28 task asks its client through tasks/update")),
      input: (method, params, key, accept) => this.#runner.ask(l, method, params, key, accept) as never,
    };
    return this.#asking;
  }

  /** 2025-11-25: a request to the client on behalf of a task names it, and is given up with it. */
  #related(options: ClientRequestOptions | undefined): ClientRequestOptions | undefined {
    const l = this.#live;
    if (l === undefined) return options;
    return { ...options, meta: { [RELATED_TASK]: { taskId: l.record.taskId } }, signal: this.signal };
  }
}
