/**
 * The Lua scripts of `RedisSessionStore`, each on ONE key: a session's hash, a caller's set or the set
 * of all. On a cluster each sits where its own name hashes (no CROSSSLOT, no hash tag needed, load
 * spread); a prefix with a hash tag puts them all in one slot, and that works alike.
 *
 * The caps' sets hold each session's id scored by a deadline of their own: the session's expiry plus a
 * slack, written on create and pushed on by the rare request whose session would outlive it (the hash
 * keeps in its field `e` the score both sets took). A score below Redis's `now` no longer counts; a set's key expires
 * with its last score.
 */
import { Script } from "./script.js";

/**
 * Redis's clock in milliseconds, so that instances whose clocks differ agree on expiry. Keys expire at
 * an absolute deadline too (PEXPIREAT): a relative PEXPIRE counts from the script's start, which on a
 * starved Redis lags TIME. Redis expires a key once its deadline has passed (the millisecond after
 * it), so a set lets go of a score only then too: scores below `now`, never at it.
 */
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** Makes a set's key expire with its highest score (never before a score it holds). */
const KEEP = `local function keep(key)
  local top = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if top[2] then redis.call('PEXPIREAT', key, top[2]) end
end`;

/**
 * A session of the layout before hashes moved under `s:` is found at the id's old key (KEYS[2], given
 * only where it may be: an id of the handler's form, in the slot of KEYS[1]): renamed once, where the
 * session is missing, so a rolling deploy loses no live session. Its expiry stays as it was; its hash
 * has no `e`, so the next touch pushes its scores.
 */
const MOVED = `local function moved()
  local old = KEYS[2]
  if not old or redis.call('TYPE', old).ok ~= 'hash' then return false end
  redis.call('RENAME', old, KEYS[1])
  return true
end`;

/**
 * Reserves a place in one cap's set. KEYS: the set. ARGV: the cap, the score ahead of now (the time
 * to live and the slack), the id, "1" to make the key expire with its last score. The score written,
 * or 0 at the cap (nothing written).
 */
export const RESERVE = new Script(`${NOW}
${KEEP}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
local score = now + tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], score, ARGV[3])
if ARGV[4] == '1' then keep(KEYS[1]) end
return score`);

/** Gives a place back. KEYS: the set. ARGV: the id. */
export const RELEASE = new Script(`return redis.call('ZREM', KEYS[1], ARGV[1])`);

/**
 * Pushes a session's score on in one set, never back; puts it back in a set that let go of it (its
 * score lapsed while a push failed: a live session is never left uncounted). A push that crosses the
 * END of its session puts back a place that lapses by its score (at most the time to live and the
 * slack). KEYS: the set. ARGV: the score, the id, "1" to keep the key's expiry.
 */
export const PUSH = new Script(`${KEEP}
local n = redis.call('ZADD', KEYS[1], 'GT', 'CH', ARGV[1], ARGV[2])
if n > 0 and ARGV[3] == '1' then keep(KEYS[1]) end
return n`);

/**
 * Writes a new session's hash, once its places are reserved. KEYS: the hash. ARGV: the time to live,
 * the lower of the two scores written, then the fields and values. 0 when that score has passed (the
 * places lapsed: nothing written); 1 when written. Its expiry is never after the score, so a session
 * is never live uncounted.
 */
export const WRITE = new Script(`${NOW}
local score = tonumber(ARGV[2])
if score < now then return 0 end
redis.call('HSET', KEYS[1], 'e', ARGV[2], unpack(ARGV, 3))
redis.call('PEXPIREAT', KEYS[1], math.min(now + tonumber(ARGV[1]), score))
return 1`);

/**
 * Records in the hash the score both sets took (once both pushes answered: until then every request
 * pushes again). KEYS: the hash. ARGV: the score. Nothing for a session that ended.
 */
export const PUSHED = new Script(`if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if (tonumber(redis.call('HGET', KEYS[1], 'e')) or 0) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'e', ARGV[1])
return 1`);

/**
 * A session's one call per request. KEYS: the hash (and its old key, where it may be). ARGV: the time
 * to live, the slack, then "claim"/"release" and an instance, or nothing. False when there is no
 * session; else { the new score for the caps' sets (0: theirs holds), the hash as it was }, its
 * expiry pushed ahead. A new score is due when the sets' would lapse before the session; the hash
 * keeps the old one until both sets took it ({@link PUSHED}).
 */
export const TOUCH = new Script(`${NOW}
${MOVED}
local h = redis.call('HGETALL', KEYS[1])
if #h == 0 and moved() then h = redis.call('HGETALL', KEYS[1]) end
if #h == 0 then return false end
local ttl = tonumber(ARGV[1])
redis.call('PEXPIREAT', KEYS[1], now + ttl)
if ARGV[3] == 'claim' then
  redis.call('HSET', KEYS[1], 'h', ARGV[4])
elseif ARGV[3] == 'release' and redis.call('HGET', KEYS[1], 'h') == ARGV[4] then
  redis.call('HDEL', KEYS[1], 'h')
end
local push = 0
if (tonumber(redis.call('HGET', KEYS[1], 'e')) or 0) < now + ttl then
  push = now + ttl + tonumber(ARGV[2])
end
return { push, h }`);

/** KEYS: the hash (and its old key). ARGV: the log level (empty: unchanged), then "+uri" and "-uri". Nothing for a session that ended. */
export const UPDATE = new Script(`${MOVED}
if redis.call('EXISTS', KEYS[1]) == 0 and not moved() then return 0 end
if ARGV[1] ~= '' then redis.call('HSET', KEYS[1], 'l', ARGV[1]) end
for i = 2, #ARGV do
  local field = 's:' .. string.sub(ARGV[i], 2)
  if string.sub(ARGV[i], 1, 1) == '+' then redis.call('HSET', KEYS[1], field, '1')
  else redis.call('HDEL', KEYS[1], field) end
end
return 1`);

/** KEYS: the hash (and its old key). Deletes it; its caller, or false when it was not live. */
export const END = new Script(`${MOVED}
local caller = redis.call('HGET', KEYS[1], 'k')
if not caller and moved() then caller = redis.call('HGET', KEYS[1], 'k') end
if not caller then return false end
redis.call('DEL', KEYS[1])
return caller`);
