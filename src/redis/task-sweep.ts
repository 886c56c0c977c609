/**
 * The sweep of `RedisTaskStore`: finding the running tasks of instances that went away (their runner's
 * lease ran out) and failing those whose own lease ran out too, for the runners of this release and
 * those of the release before (its one set of leases, where it is named).
 */
import { isTerminal, type TaskRecord } from "../ext/task-store.js";
import { parse, type TaskCalls } from "./task-scripts.js";

/** Tasks of dead runners judged per tick, at most (the next tick takes the rest). */
const SWEEP = 100;

/** What the sweep needs of its store. */
export interface SweeperOptions {
  readonly calls: TaskCalls;
  /** Whether leases are judged now (not right after an outage or a stalled tick). */
  readonly judging: () => boolean;
  /** Fails a task whose lease ran out: what is stored afterwards, and whether its lease was held after all. */
  readonly fail: (record: TaskRecord) => Promise<[TaskRecord | undefined, boolean]>;
}

/** One store's sweep. */
export class Sweeper {
  readonly #o: SweeperOptions;

  constructor(options: SweeperOptions) {
    this.#o = options;
  }

  /**
   * Fails the tasks of runners whose lease ran out: a batch of each one's index is judged, each task
   * failed if its own lease lapsed too; an id leaves the index only once judged (failed, ended or gone),
   * so a sweeper that dies meanwhile loses none. A runner whose index is empty is forgotten.
   */
  async sweep(): Promise<void> {
    const { calls } = this.#o;
    let budget = SWEEP;
    const lapsed = (await calls.run("lapsed", [calls.runners], [String(SWEEP)])) as string[];
    for (const runner of lapsed) {
      if (budget <= 0 || !this.#o.judging()) return;
      const ids = (await calls.run("pick", [calls.index(runner)], [String(budget)])) as string[];
      if (ids.length === 0) {
        await calls.run("forget", [calls.runners], [runner]);
        continue;
      }
      budget -= ids.length;
      const judged: string[] = [];
      await Promise.all(ids.map(async (id) => (await this.#judge(id)) || judged.push(id)));
      // a task whose lease is still held (or that could not be judged) stays in its runner's index
      if (judged.length > 0)
        await calls.run("index", [calls.index(runner)], [String(judged.length), ...judged]);
    }
  }

  /** Fails a dead runner's task if its own lease lapsed: whether it stays in the runner's index. */
  async #judge(taskId: string): Promise<boolean> {
    const { calls } = this.#o;
    try {
      const reply = (await calls.run("get", calls.keys(taskId), [taskId])) as [string, number] | null;
      if (reply === null) return false;
      const record = parse(reply[0]);
      if (isTerminal(record.status)) return false;
      // its lease is held: a runner that came back, or one that made the task after its last renewal
      if (Number(reply[1]) !== 1) return true;
      return (await this.#o.fail(record))[1];
    } catch {
      return true;
    }
  }

  /**
   * Fails the tasks whose lease ran out in the release before's set (its runner, of that release, died
   * during a rolling deploy: no runner's index names them), as that release's tick did; one gone or
   * ended leaves the set.
   */
  async sweepLegacy(): Promise<void> {
    const { calls } = this.#o;
    if (!calls.legacy) return;
    const { leases } = calls;
    const ids = (await calls.run("lapsed", [leases], [String(SWEEP)])) as string[];
    await Promise.all(
      ids.map(async (id) => {
        const reply = (await calls.run("get", calls.keys(id), [id])) as [string, number] | null;
        const record = reply === null ? undefined : parse(reply[0]);
        if (record === undefined || isTerminal(record.status)) await calls.run("forget", [leases], [id]);
        else if (Number(reply![1]) === 1 && this.#o.judging()) await this.#o.fail(record);
      }),
    );
  }
}
