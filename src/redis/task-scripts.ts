/**
 * The Lua scripts of `RedisTaskStore`, and how it calls them (keys named, failures told in words a
 * client may see). Each script is on one key, so that on a cluster every script runs on the
 * node of that key and tasks spread over the masters. A task is a hash (`record`: its JSON, `status`,
 * `runner`: the id of the store that runs it, `deadline`: its lease, on Redis's own clock so that
 * instances whose clocks differ agree) expiring with the task's ttl. The runners are one sorted set
 * (runner id → its own deadline, renewed each tick) and each runner has a set of the tasks it started:
 * how a dead runner's tasks are found. The record's JSON is stored as given and never re-encoded in Lua
 * (cjson would turn `[]` into `{}`).
 *
 * The release before kept every running task's lease in one sorted set, `leases` (task id → deadline).
 * Where that set can be named beside a task's hash (one node, Sentinel, or a cluster where both share a
 * slot: a hash-tagged prefix, the only way that release ran on a cluster) it is its second key, kept as
 * that release expects it (the same deadline on create and renewal, taken out at the end) and read for
 * a task that has no `deadline` of its own (one that release runs), so that a rolling deploy fails no
 * task a live instance of either release runs.
 */

import { ErrorCode, McpError } from "../errors.js";
import type { TaskRecord } from "../ext/task-store.js";
import type { RedisLog } from "./client.js";
import { hashTag, isOutage, type Link } from "./link.js";
import { Script } from "./script.js";

/** Redis's clock in milliseconds, and the statuses that never change again. */
const PRELUDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function terminal(s) return s == 'completed' or s == 'failed' or s == 'cancelled' end
`;

/**
 * A task's lease (`v`: its HMGET, the deadline at `v[i]`), else its place in the release before's set
 * (KEYS[2], when named; the task id at ARGV[id]); `lease(id)` sets both, `drop(id)` takes it out of that set.
 */
const LEASE = `
local function deadline(v, i, id)
  if v[i] then return tonumber(v[i]) end
  if KEYS[2] then
    local d = redis.call('ZSCORE', KEYS[2], ARGV[id])
    if d then return tonumber(d) end
  end
  return nil
end
local function lease(id, d)
  redis.call('HSET', KEYS[1], 'deadline', d)
  if KEYS[2] then redis.call('ZADD', KEYS[2], d, ARGV[id]) end
end
local function drop(id) if KEYS[2] then redis.call('ZREM', KEYS[2], ARGV[id]) end end
`;

/** KEYS: task (, leases). ARGV: record, status, runner, ttl ms ('' for none), lease ms, task id. */
export const CREATE = `${PRELUDE}${LEASE}
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'record', ARGV[1], 'status', ARGV[2], 'runner', ARGV[3])
if terminal(ARGV[2]) then drop(6) else lease(6, now + tonumber(ARGV[5])) end
if ARGV[4] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return 1
`;

/**
 * KEYS: task (, leases). ARGV: task id. Nil when unknown; else the record, 1 when its lease ran out
 * (else 0), and its runner (so that a signal right after a read needs no second read).
 */
export const GET = `${PRELUDE}${LEASE}
local v = redis.call('HMGET', KEYS[1], 'record', 'status', 'deadline', 'runner')
if not v[1] then return false end
local lapsed = 1
if terminal(v[2]) then lapsed = 0 else
  local d = deadline(v, 3, 1)
  if d and d >= now then lapsed = 0 end
end
return {v[1], lapsed, v[4] or ''}
`;

/**
 * KEYS: task (, leases). ARGV: record, status, changes channel, message head, task id. Nil when unknown;
 * 1 when written (and published); the stored record when it is terminal already (the write lost).
 */
export const SET = `${PRELUDE}${LEASE}
local s = redis.call('HGET', KEYS[1], 'status')
if not s then return false end
if terminal(s) then return redis.call('HGET', KEYS[1], 'record') end
redis.call('HSET', KEYS[1], 'record', ARGV[1], 'status', ARGV[2])
if terminal(ARGV[2]) then
  redis.call('HDEL', KEYS[1], 'deadline')
  drop(5)
end
redis.call('PUBLISH', ARGV[3], ARGV[4] .. ARGV[1] .. '}')
return 1
`;

/**
 * KEYS: task (, leases). ARGV: the failed record, changes channel, message head, task id. Fails a task
 * only while its lease is out (a renewal meanwhile wins) and it is not terminal. Nil when unknown; else
 * the record stored afterwards and what happened: 1 failed now, 0 it had ended, 2 its lease is held.
 * A task unknown or ended leaves the release before's set too (as that release's tick did).
 */
export const FAIL = `${PRELUDE}${LEASE}
local v = redis.call('HMGET', KEYS[1], 'record', 'status', 'deadline')
if not v[1] then
  drop(4)
  return false
end
if terminal(v[2]) then
  drop(4)
  return {v[1], 0}
end
local d = deadline(v, 3, 4)
if d and d >= now then return {v[1], 2} end
redis.call('HSET', KEYS[1], 'record', ARGV[1], 'status', 'failed')
redis.call('HDEL', KEYS[1], 'deadline')
drop(4)
redis.call('PUBLISH', ARGV[2], ARGV[3] .. ARGV[1] .. '}')
return {ARGV[1], 1}
`;

/** KEYS: task (, leases). ARGV: lease ms, task id. Renews a running task's lease: 1; 0 when it ended or is gone. */
export const RENEW = `${PRELUDE}${LEASE}
local s = redis.call('HGET', KEYS[1], 'status')
if not s or terminal(s) then
  drop(2)
  return 0
end
lease(2, now + tonumber(ARGV[1]))
return 1
`;

/** KEYS: runners. ARGV: runner id, lease ms. The runner is alive until its lease from now. */
export const REGISTER = `${PRELUDE}
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
return 1
`;

/** KEYS: runners (or the release before's leases). ARGV: most to take. The runners (tasks) whose lease ran out. */
export const LAPSED = `${PRELUDE}
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. now, 'LIMIT', 0, tonumber(ARGV[1]))
`;

/** KEYS: runners (or the release before's leases). ARGV: runner (task) id. Forgets one whose lease is still out (renewed meanwhile: kept). */
export const FORGET = `${PRELUDE}
local deadline = redis.call('ZSCORE', KEYS[1], ARGV[1])
if deadline and tonumber(deadline) < now then redis.call('ZREM', KEYS[1], ARGV[1]) end
return 1
`;

/** KEYS: a runner's tasks. ARGV: how many ids follow to remove, those ids, then ids to add. */
export const INDEX = `
local n = tonumber(ARGV[1])
for i = 2, n + 1 do redis.call('SREM', KEYS[1], ARGV[i]) end
for i = n + 2, #ARGV do redis.call('SADD', KEYS[1], ARGV[i]) end
return 1
`;

/**
 * KEYS: a runner's tasks. ARGV: most to pick. Some of its task ids, left in place: an id leaves only once
 * a sweeper has judged it (a sweeper that dies meanwhile loses none; two that pick the same id both
 * judge it, and FAIL is idempotent).
 */
export const PICK = `
return redis.call('SRANDMEMBER', KEYS[1], tonumber(ARGV[1]))
`;

/**
 * KEYS: task (, leases). ARGV: runner id, task id. Deletes a task this runner's create wrote though the
 * create failed (the other half failed, or it ran past its deadline): the client never learned of it.
 */
export const DROP = `${LEASE}
if redis.call('HGET', KEYS[1], 'runner') == ARGV[1] then
  redis.call('DEL', KEYS[1])
  drop(2)
end
return 1
`;

/** KEYS: task. The runner of a task (ended or not: a cancel is stored before it is signalled), nil when unknown. */
export const RUNNER = `
return redis.call('HGET', KEYS[1], 'runner')
`;

/** The scripts, by name: made once for every store (each knows its digest once computed). */
const SCRIPTS = {
  create: new Script(CREATE),
  get: new Script(GET),
  set: new Script(SET),
  fail: new Script(FAIL),
  renew: new Script(RENEW),
  register: new Script(REGISTER),
  lapsed: new Script(LAPSED),
  forget: new Script(FORGET),
  index: new Script(INDEX),
  pick: new Script(PICK),
  drop: new Script(DROP),
  runner: new Script(RUNNER),
};

/** A record read from Redis, checked to be one picomcp wrote. */
export function parse(json: unknown): TaskRecord {
  const record = JSON.parse(String(json)) as TaskRecord;
  if (typeof record !== "object" || record === null || typeof record.taskId !== "string")
    throw new Error("picomcp/redis: a task record in Redis is not one picomcp wrote");
  return record;
}

/**
 * One store's calls: its keys, and each call through its Link. A failure rejects with an error a
 * client may see (`-32603`, the reason as its `cause`), never Redis's own words; one that is no outage
 * (Redis refused the call) is logged, since no outage line tells it.
 */
export class TaskCalls {
  readonly #link: Link;
  readonly #prefix: string;
  readonly #log: RedisLog;
  readonly #outage: () => void;
  /**
   * Whether the release before's set of leases is named beside each task (and swept): on one node and
   * Sentinel, and on a cluster whose prefix holds a hash tag (the only way that release ran there:
   * every key of the store in the tag's slot, as `slotOf` reads it); never else, not even for a task
   * whose key happens to share the set's slot.
   */
  readonly legacy: boolean;

  constructor(link: Link, prefix: string, log: RedisLog, outage: () => void) {
    this.#link = link;
    this.#prefix = prefix;
    this.#log = log;
    this.#outage = outage;
    this.legacy = !link.cluster || hashTag(prefix) !== undefined;
  }

  /** A task's hash. */
  task(taskId: string): string {
    return `${this.#prefix}task:${taskId}`;
  }

  /** The keys of a task's scripts: its hash, and the release before's set of leases where it is named. */
  keys(taskId: string): string[] {
    return this.legacy ? [this.task(taskId), this.leases] : [this.task(taskId)];
  }

  /** The release before's set of the running tasks' leases (task id → deadline). */
  get leases(): string {
    return `${this.#prefix}leases`;
  }

  /** The set of the tasks a runner started (a slot of its own on a cluster, apart from its tasks'). */
  index(runner: string): string {
    return `${this.#prefix}runner:${runner}`;
  }

  /** The runners, by the deadline of their own lease. */
  get runners(): string {
    return `${this.#prefix}runners`;
  }

  async run(script: keyof typeof SCRIPTS, keys: string[], args: string[]): Promise<unknown> {
    try {
      // a call not yet written at its deadline is dropped (Link.call): a step written after the next
      // one would undo it; one already written to a Redis that stalls still runs when it resumes
      return await this.#link.call((client) => SCRIPTS[script].send(client, keys, args));
    } catch (error) {
      throw this.#failure(error);
    }
  }

  /** Publishes on an instance's channel (SPUBLISH on a cluster: its count is every subscriber's). */
  async publish(channel: string, message: string): Promise<number> {
    try {
      return await this.#link.publish(channel, message, true);
    } catch (error) {
      throw this.#failure(error);
    }
  }

  #failure(error: unknown): McpError {
    const outage = isOutage(error);
    if (outage) this.#outage();
    else this.#log(`picomcp/redis: the task store's call failed (${(error as Error).message})`);
    const failure = new McpError(
      ErrorCode.InternalError,
      outage ? "Internal error: the task store is unreachable" : "Internal error: the task store failed",
    );
    (failure as { cause?: unknown }).cause = error;
    return failure;
  }
}
