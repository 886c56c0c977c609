/**
 * The Lua scripts of `RedisTaskStore`. A task is a hash (`record`: its JSON, `status`, `runner`: the
 * id of the store that runs it) expiring with the task's ttl; the leases of running tasks are one
 * sorted set scored by the deadline on Redis's own clock, so instances whose clocks differ agree. The
 * record's JSON is stored as given and never re-encoded in Lua (cjson would turn `[]` into `{}`).
 */

/** Redis's clock in milliseconds, and the statuses that never change again. */
const PRELUDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function terminal(s) return s == 'completed' or s == 'failed' or s == 'cancelled' end
`;

/** KEYS: task, leases. ARGV: record, status, runner, ttl ms ('' for none), lease ms, task id. */
export const CREATE = `${PRELUDE}
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'record', ARGV[1], 'status', ARGV[2], 'runner', ARGV[3])
if ARGV[4] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
if terminal(ARGV[2]) then redis.call('ZREM', KEYS[2], ARGV[6])
else redis.call('ZADD', KEYS[2], now + tonumber(ARGV[5]), ARGV[6]) end
return 1
`;

/** KEYS: task, leases. ARGV: task id. Nil when unknown; else the record and 1 when its lease ran out. */
export const GET = `${PRELUDE}
local v = redis.call('HMGET', KEYS[1], 'record', 'status')
if not v[1] then return false end
if terminal(v[2]) then return {v[1], 0} end
local deadline = redis.call('ZSCORE', KEYS[2], ARGV[1])
if deadline and tonumber(deadline) >= now then return {v[1], 0} end
return {v[1], 1}
`;

/**
 * KEYS: task, leases. ARGV: record, status, task id, changes channel, message head. Nil when unknown;
 * 1 when written (and published); the stored record when it is terminal already (the write lost).
 */
export const SET = `${PRELUDE}
local s = redis.call('HGET', KEYS[1], 'status')
if not s then return false end
if terminal(s) then return redis.call('HGET', KEYS[1], 'record') end
redis.call('HSET', KEYS[1], 'record', ARGV[1], 'status', ARGV[2])
if terminal(ARGV[2]) then redis.call('ZREM', KEYS[2], ARGV[3]) end
redis.call('PUBLISH', ARGV[4], ARGV[5] .. ARGV[1] .. '}')
return 1
`;

/**
 * KEYS: task, leases. ARGV: the failed record, task id, changes channel, message head. Fails a task
 * only while its lease is out (a renewal meanwhile wins) and it is not terminal. Nil when unknown;
 * else the record stored afterwards.
 */
export const FAIL = `${PRELUDE}
local v = redis.call('HMGET', KEYS[1], 'record', 'status')
if not v[1] then return false end
if terminal(v[2]) then return v[1] end
local deadline = redis.call('ZSCORE', KEYS[2], ARGV[2])
if deadline and tonumber(deadline) >= now then return v[1] end
redis.call('HSET', KEYS[1], 'record', ARGV[1], 'status', 'failed')
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[4] .. ARGV[1] .. '}')
return ARGV[1]
`;

/**
 * KEYS: leases. ARGV: lease ms, task key prefix, most expired leases to take, then the ids of the
 * tasks this instance runs. Renews those leases, and answers {ids whose lease is gone (ended
 * elsewhere, or expired with the task), records of running tasks whose lease ran out}.
 */
export const TICK = `${PRELUDE}
local gone = {}
for i = 4, #ARGV do
  local id = ARGV[i]
  if redis.call('ZSCORE', KEYS[1], id) and redis.call('EXISTS', ARGV[2] .. id) == 1 then
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), id)
  else
    -- ended elsewhere, or expired with its ttl: no lease to keep
    redis.call('ZREM', KEYS[1], id)
    gone[#gone + 1] = id
  end
end
local out = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. now, 'LIMIT', 0, tonumber(ARGV[3]))) do
  local v = redis.call('HMGET', ARGV[2] .. id, 'record', 'status')
  if not v[1] or terminal(v[2]) then redis.call('ZREM', KEYS[1], id) else out[#out + 1] = v[1] end
end
return {gone, out}
`;

/** KEYS: task. ARGV: instance channel prefix, message. Publishes to the task's runner: how many heard it. */
export const SIGNAL = `
local runner = redis.call('HGET', KEYS[1], 'runner')
if not runner then return 0 end
return redis.call('PUBLISH', ARGV[1] .. runner, ARGV[2])
`;
