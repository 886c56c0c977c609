// Helpers of the session tests on real deployments (test/redis/redis-sessions-cluster.test.ts,
// redis-sessions-sentinel.test.ts): a bus that carries nothing, a record, ids of the handler's form, a
// wait for the replicas to have every write, and a check that every session is still there.
import { expect } from "vitest";
import type { SessionRecord, SessionStore } from "../src/http/session-store.js";
import type { RedisBus } from "../src/redis/index.js";
import { until } from "./redis-helpers.js";
import { info, type Node } from "./redis-nodes.js";

/** The relay is no part of these tests: a bus that carries nothing (and sends Redis nothing). */
export const NO_BUS = { relay: () => {}, onRelay: () => () => {} } as unknown as RedisBus;

export const RECORD: SessionRecord = {
  protocolVersion: "2025-11-25",
  capabilities: {},
  principal: "ada",
  authenticated: true,
  caller: "principal:ada",
  subscriptions: [],
};

/** A session id of the handler's form (32 lower-case hex digits). */
export const hex = () => crypto.randomUUID().replaceAll("-", "");

/**
 * Waits until each master's replica has every write the master acknowledged: replication is
 * asynchronous, and a fault before that would lose what the replica had not had yet.
 */
export async function replicated(masters: () => Promise<readonly Node[]>): Promise<void> {
  await until(
    async () => {
      for (const m of await masters()) {
        const r = info(await m.cli("INFO", "replication").catch(() => ""));
        const offset = /offset=(\d+)/.exec(r.slave0 ?? "")?.[1];
        if (offset === undefined || offset !== r.master_repl_offset) return false;
      }
      return true;
    },
    15_000,
    "the replicas to have every write",
  );
}

/**
 * Touches every session of `ids` until each answers (calls fail while the client finds the new
 * master): none may be missing, and the first `debug` of them kept their log level. Resolves with the
 * milliseconds it took.
 */
export async function everySession(
  store: SessionStore,
  ids: readonly string[],
  debug: number,
  what: string,
): Promise<number> {
  const began = Date.now();
  const missing: string[] = [];
  const pending = new Set(ids);
  await until(
    async () => {
      await Promise.all(
        [...pending].map(async (id) => {
          const record = await store.touch(id, 600_000).catch(() => null);
          if (record === null) return;
          pending.delete(id);
          if (record === undefined) missing.push(id);
          else expect(record.logLevel).toBe(ids.indexOf(id) < debug ? "debug" : undefined);
        }),
      );
      return pending.size === 0;
    },
    30_000,
    `every session after ${what}`,
  );
  expect([what, missing]).toEqual([what, []]);
  return Date.now() - began;
}
