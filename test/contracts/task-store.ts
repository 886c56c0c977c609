// The task store contract: what the tasks extension relies on from any `TaskStore` (src/ext/task-store.ts).
// Each store runs it in a few lines (test/contracts/memory.test.ts; a Redis store the same way),
// giving a fresh store and a way to move its clock on.
import { afterEach, describe, expect, it } from "vitest";
import type { TaskRecord, TaskStore } from "../../src/ext/task-store.js";
import { need } from "./support.js";

/** A fresh, empty store under test. */
export interface TaskStoreTarget {
  readonly store: TaskStore;
  /** `shared`: another instance's store on the same backend (any replica answers `tasks/get`). */
  readonly peer?: TaskStore;
  /**
   * Moves the store's clock on by `ms`: an injected `now`, or for a store whose backend expires keys
   * itself, shortening every key's time to live by `ms` (one that reaches zero is gone).
   */
  advance(ms: number): void | Promise<void>;
  close?(): void | Promise<void>;
}

/** What `make` is asked for. */
export interface TaskStoreOptions {
  /** The store's bound on tasks kept (a store without one ignores it): 1000, or less where a test checks it. */
  readonly maxTasks: number;
}

/** What the store offers beyond the interface, so that the suite checks it too. */
export interface TaskStoreFeatures {
  /** Its backend is shared by instances: the target gives `peer`, which must read what `store` keeps. */
  readonly shared?: boolean;
  /** It honours `maxTasks`: at most that many tasks are kept, expired ones and then the oldest going first. */
  readonly maxTasks?: boolean;
}

const HOUR = 3_600_000;

/** A task record with every field a store must keep, as plain JSON. */
function full(taskId: string): TaskRecord {
  return {
    taskId,
    status: "input_required",
    statusMessage: "waiting for you — ✓",
    createdAt: "2026-01-01T00:00:00.000Z",
    lastUpdatedAt: "2026-01-01T00:00:01.000Z",
    ttlMs: HOUR,
    pollIntervalMs: 1500,
    inputRequests: {
      name: {
        method: "elicitation/create",
        params: { message: "Your name?", requestedSchema: { type: "object", properties: {} } },
      },
    },
    result: {
      content: [{ type: "text", text: 'a "quoted"\nline' }],
      structuredContent: { n: [1, null, 2.5] },
    },
    error: { code: -32602, message: "Invalid params", data: { field: "x" } },
    owner: "user:ada",
  };
}

function working(taskId: string, ttlMs: number | null = HOUR, owner?: string): TaskRecord {
  const record: TaskRecord = {
    taskId,
    status: "working",
    createdAt: "2026-01-01T00:00:00.000Z",
    lastUpdatedAt: "2026-01-01T00:00:00.000Z",
    ttlMs,
  };
  if (owner !== undefined) record.owner = owner;
  return record;
}

/** Runs the task store contract against the stores `make` builds (a fresh one per test). */
export function taskStoreContract(
  name: string,
  make: (options: TaskStoreOptions) => Promise<TaskStoreTarget>,
  features: TaskStoreFeatures = {},
): void {
  describe(`task store contract: ${name}`, () => {
    const open: TaskStoreTarget[] = [];
    afterEach(async () => {
      for (const t of open.splice(0)) await t.close?.();
    });
    async function target(options: TaskStoreOptions = { maxTasks: 1000 }): Promise<TaskStoreTarget> {
      const t = await make(options);
      open.push(t);
      return t;
    }
    /** The store, and the peer instance's when there is one: each must answer the same. */
    const readers = (t: TaskStoreTarget) => (features.shared ? [t.store, need(t.peer, "peer")] : [t.store]);

    it("keeps every field of a record as plain JSON, readable once create resolves", async () => {
      const t = await target();
      await t.store.create(full("t-1"));
      for (const s of readers(t)) expect(await s.get("t-1")).toStrictEqual(full("t-1"));
      await t.store.create(working("t-2"));
      // an optional field that was never set is absent, not undefined or null
      for (const s of readers(t))
        expect(Object.keys((await s.get("t-2"))!).sort()).toEqual([
          "createdAt",
          "lastUpdatedAt",
          "status",
          "taskId",
          "ttlMs",
        ]);
    });

    it("answers undefined for a task it never had, whatever the id's characters", async () => {
      const t = await target();
      await t.store.create(working("known"));
      for (const id of ["unknown", "", "*", "kno?n", "[k]nown", "known ", "known\n", "ключ"]) {
        for (const s of readers(t)) expect(await s.get(id)).toBeUndefined();
      }
    });

    it("hands out copies: changing what was given or got changes nothing stored", async () => {
      const t = await target();
      const given = full("t-1");
      await t.store.create(given);
      given.status = "cancelled";
      given.result!.content = [];
      const got = (await t.store.get("t-1"))!;
      got.status = "completed";
      (got.inputRequests as { [k: string]: unknown }).other = {};
      expect(await t.store.get("t-1")).toStrictEqual(full("t-1"));
      const next = { ...full("t-1"), status: "working" as const };
      await t.store.set(next);
      next.statusMessage = "changed after set";
      expect((await t.store.get("t-1"))?.statusMessage).toBe("waiting for you — ✓");
    });

    it("set replaces the whole record: a field the new record lacks is gone", async () => {
      const t = await target();
      await t.store.create(full("t-1"));
      const { inputRequests: _, error: __, statusMessage: ___, ...rest } = full("t-1");
      const completed: TaskRecord = {
        ...rest,
        status: "completed",
        lastUpdatedAt: "2026-01-01T00:00:09.000Z",
      };
      await t.store.set(completed);
      for (const s of readers(t)) expect(await s.get("t-1")).toStrictEqual(completed);
    });

    it("keeps a terminal status final: a later set changes nothing, and says what is stored", async () => {
      const t = await target();
      await t.store.create(working("t-1", HOUR, "ada"));
      const cancelled: TaskRecord = { ...working("t-1", HOUR, "ada"), status: "cancelled" };
      const writer = features.shared ? need(t.peer, "peer") : t.store;
      // two processes ending one task at once: the first write wins, the other learns it lost
      const completed: TaskRecord = {
        ...working("t-1", HOUR, "ada"),
        status: "completed",
        result: { content: [] },
      };
      const [first, second] = await Promise.all([t.store.set(cancelled), writer.set(completed)]);
      const won = [cancelled, completed].find((r) => r.status === first?.status);
      expect(won).toBeDefined();
      expect(first).toStrictEqual(won);
      expect(second).toStrictEqual(won);
      await t.store.set({ ...working("t-1", HOUR, "ada"), statusMessage: "too late" });
      for (const s of readers(t)) expect(await s.get("t-1")).toStrictEqual(won);
    });

    it("set of a task it does not have keeps nothing", async () => {
      const t = await target();
      await t.store.set(working("never-created"));
      for (const s of readers(t)) expect(await s.get("never-created")).toBeUndefined();
    });

    it("keeps tasks apart: each its own record and owner; a change to one leaves the others", async () => {
      const t = await target();
      await t.store.create(working("a", HOUR, "alice"));
      await t.store.create(working("b", HOUR, "bob"));
      await t.store.create(working("c", HOUR));
      await t.store.set({ ...working("a", HOUR, "alice"), status: "completed", result: { content: [] } });
      for (const s of readers(t)) {
        expect(await s.get("a")).toStrictEqual({
          ...working("a", HOUR, "alice"),
          status: "completed",
          result: { content: [] },
        });
        expect(await s.get("b")).toStrictEqual(working("b", HOUR, "bob"));
        // no owner is not an empty owner: an anonymous task matches only anonymous readers
        expect(await s.get("c")).toStrictEqual(working("c", HOUR));
      }
    });

    it("takes creates and sets in flight together: every one lands", async () => {
      const t = await target();
      const ids = Array.from({ length: 40 }, (_, i) => `task-${i}`);
      await Promise.all(ids.map((id) => t.store.create(working(id, HOUR, `owner-${id}`))));
      await Promise.all(
        ids.map((id, i) => t.store.set({ ...working(id, HOUR, `owner-${id}`), statusMessage: `step ${i}` })),
      );
      for (const s of readers(t)) {
        const got = await Promise.all(ids.map((id) => s.get(id)));
        expect(got.map((r) => r?.statusMessage)).toEqual(ids.map((_, i) => `step ${i}`));
      }
    });

    it("forgets a task once its ttlMs has passed since creation, for every reader", async () => {
      const t = await target();
      await t.store.create(working("short", 60_000));
      await t.store.create(working("long", 10 * 60_000));
      await t.advance(59_000);
      for (const s of readers(t)) expect((await s.get("short"))?.taskId).toBe("short");
      await t.advance(1_000);
      for (const s of readers(t)) {
        expect(await s.get("short")).toBeUndefined();
        expect((await s.get("long"))?.taskId).toBe("long");
      }
    });

    it("set neither extends a task's life nor brings an expired task back", async () => {
      const t = await target();
      await t.store.create(working("t-1", 60_000));
      await t.advance(30_000);
      await t.store.set({ ...working("t-1", 60_000), statusMessage: "half way" });
      await t.advance(30_000);
      for (const s of readers(t)) expect(await s.get("t-1")).toBeUndefined();
      await t.store.set({ ...working("t-1", 60_000), status: "cancelled" });
      for (const s of readers(t)) expect(await s.get("t-1")).toBeUndefined();
    });

    it("keeps a task whose ttlMs is null however much time passes", async () => {
      const t = await target();
      await t.store.create(working("forever", null));
      await t.advance(10 * 365 * 24 * HOUR);
      for (const s of readers(t)) expect(await s.get("forever")).toStrictEqual(working("forever", null));
    });

    it.runIf(features.maxTasks === true)(
      "keeps at most maxTasks: one more is refused, and no live task is forgotten for it",
      async () => {
        const t = await target({ maxTasks: 3 });
        for (const id of ["a", "b", "c"]) await t.store.create(working(id));
        const refused = await t.store.create(working("d")).then(
          () => undefined,
          (e: { code: number; data: unknown }) => ({ code: e.code, data: e.data }),
        );
        expect(refused).toMatchObject({ code: -32000, data: { limit: "tasks", scope: "server", max: 3 } });
        expect(await t.store.get("d")).toBeUndefined();
        for (const id of ["a", "b", "c"]) expect((await t.store.get(id))?.taskId).toBe(id);
      },
    );

    it.runIf(features.maxTasks === true)(
      "when full, expired tasks make room before any live one goes",
      async () => {
        const t = await target({ maxTasks: 2 });
        await t.store.create(working("old-but-live", null));
        await t.store.create(working("young-but-expired", 1_000));
        await t.advance(1_000);
        await t.store.create(working("new"));
        expect((await t.store.get("old-but-live"))?.taskId).toBe("old-but-live");
        expect((await t.store.get("new"))?.taskId).toBe("new");
      },
    );
  });
}
