/**
 * The Lua scripts of `RedisTaskStore`, each on one key, so that on a cluster every script runs on the
 * node of that key and tasks spread over the masters. A task is a hash (`record`: its JSON, `status`,
 * `runner`: the id of the store that runs it, `deadline`: its lease, on Redis's own clock so that
 * instances whose clocks differ agree) expiring with the task's ttl. The runners are one sorted set
 * (runner id → its own deadline, renewed each tick) and each runner has a set of the tasks it started:
 * how a dead runner's tasks are found. The record's JSON is stored as given and never re-encoded in Lua
 * (cjson would turn `[]` into `{}`).
 */

/** Redis's clock in milliseconds, and the statuses that never change again. */
const PRELUDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function terminal(s) return s == 'completed' or s == 'failed' or s == 'cancelled' end
`;

/** KEYS: task. ARGV: record, status, runner, ttl ms ('' for none), lease ms. */
export const CREATE = `${PRELUDE}
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'record', ARGV[1], 'status', ARGV[2], 'runner', ARGV[3])
if not terminal(ARGV[2]) then redis.call('HSET', KEYS[1], 'deadline', now + tonumber(ARGV[5])) end
if ARGV[4] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return 1
`;

/**
 * KEYS: task. Nil when unknown; else the record, 1 when its lease ran out (else 0), and its runner
 * (so that a signal right after a read needs no second read).
 */
export const GET = `${PRELUDE}
local v = redis.call('HMGET', KEYS[1], 'record', 'status', 'deadline', 'runner')
if not v[1] then return false end
local lapsed = 1
if terminal(v[2]) or (v[3] and tonumber(v[3]) >= now) then lapsed = 0 end
return {v[1], lapsed, v[4] or ''}
`;

/**
 * KEYS: task. ARGV: record, status, changes channel, message head. Nil when unknown; 1 when written
 * (and published); the stored record when it is terminal already (the write lost).
 */
export const SET = `${PRELUDE}
local s = redis.call('HGET', KEYS[1], 'status')
if not s then return false end
if terminal(s) then return redis.call('HGET', KEYS[1], 'record') end
redis.call('HSET', KEYS[1], 'record', ARGV[1], 'status', ARGV[2])
if terminal(ARGV[2]) then redis.call('HDEL', KEYS[1], 'deadline') end
redis.call('PUBLISH', ARGV[3], ARGV[4] .. ARGV[1] .. '}')
return 1
`;

/**
 * KEYS: task. ARGV: the failed record, changes channel, message head. Fails a task only while its
 * lease is out (a renewal meanwhile wins) and it is not terminal. Nil when unknown; else the record
 * stored afterwards and what happened: 1 failed now, 0 it had ended, 2 its lease is held.
 */
export const FAIL = `${PRELUDE}
local v = redis.call('HMGET', KEYS[1], 'record', 'status', 'deadline')
if not v[1] then return false end
if terminal(v[2]) then return {v[1], 0} end
if v[3] and tonumber(v[3]) >= now then return {v[1], 2} end
redis.call('HSET', KEYS[1], 'record', ARGV[1], 'status', 'failed')
redis.call('HDEL', KEYS[1], 'deadline')
redis.call('PUBLISH', ARGV[2], ARGV[3] .. ARGV[1] .. '}')
return {ARGV[1], 1}
`;

/** KEYS: task. ARGV: lease ms. Renews a running task's lease: 1; 0 when it ended or is gone. */
export const RENEW = `${PRELUDE}
local s = redis.call('HGET', KEYS[1], 'status')
if not s or terminal(s) then return 0 end
redis.call('HSET', KEYS[1], 'deadline', now + tonumber(ARGV[1]))
return 1
`;

/** KEYS: runners. ARGV: runner id, lease ms. The runner is alive until its lease from now. */
export const REGISTER = `${PRELUDE}
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
return 1
`;

/** KEYS: runners. ARGV: most to take. The runners whose lease ran out. */
export const LAPSED = `${PRELUDE}
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. now, 'LIMIT', 0, tonumber(ARGV[1]))
`;

/** KEYS: runners. ARGV: runner id. Forgets a runner whose lease is still out (it renewed meanwhile: kept). */
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

/** KEYS: a runner's tasks. ARGV: most to take. Takes task ids out (a sweeper each, none twice). */
export const TAKE = `
return redis.call('SPOP', KEYS[1], tonumber(ARGV[1]))
`;

/** KEYS: task. The runner of a task (ended or not: a cancel is stored before it is signalled), nil when unknown. */
export const RUNNER = `
return redis.call('HGET', KEYS[1], 'runner')
`;
