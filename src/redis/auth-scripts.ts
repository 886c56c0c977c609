/**
 * The Lua scripts of `RedisAuthStore`, each on ONE key: a record (a client, a pending authorization, a
 * code, a grant, the signing keys, a hit counter) or a subject's index of grants. On a cluster each
 * sits where its own name hashes; a prefix with a hash tag puts them all in one slot, and that works
 * alike. Every key gets an expiry in the script that writes it: nothing lives forever.
 *
 * Times to live are relative (PEXPIRE), computed by the instance from the record's own deadline on its
 * own clock (the clock the authorization server wrote `expiresAt` with), so Redis's clock never matters.
 */
import { Script } from "./script.js";

/** A string record for `ARGV[2]` ms. KEYS: the record. ARGV: the JSON, the time to live. */
export const PUT = new Script(`redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`);

/** KEYS: a string record. Its JSON, or false. */
export const GET = new Script(`return redis.call('GET', KEYS[1])`);

/** KEYS: a string record. Its JSON, removed (only one caller gets it), or false. */
export const TAKE = new Script(`local v = redis.call('GET', KEYS[1])
if v then redis.call('DEL', KEYS[1]) end
return v`);

/**
 * A record kept while it is used (a registered client, the signing keys), or for a fixed time (a cached
 * metadata document). KEYS: its hash. ARGV: the JSON, the time to live, "1" when each read starts that
 * time again.
 */
export const PUT_KEPT = new Script(`redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'r', ARGV[1])
if ARGV[3] == '1' then redis.call('HSET', KEYS[1], 'i', ARGV[2]) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`);

/** KEYS: a kept record's hash. Its JSON (its time to live started again, when it is kept while used), or false. */
export const GET_KEPT = new Script(`local v = redis.call('HMGET', KEYS[1], 'r', 'i')
if not v[1] then return false end
if v[2] then redis.call('PEXPIRE', KEYS[1], v[2]) end
return v[1]`);

/** A code, until its expiry. KEYS: its hash. ARGV: the JSON, the time to live. */
export const PUT_CODE = new Script(`redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'r', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`);

/**
 * Redeems a code. KEYS: its hash. { 0, JSON } the first time (the hash then marked taken, its expiry
 * unchanged: the replay marker lasts as long as the code would have); { 1, JSON } after that; false
 * once it expired or for an unknown code.
 */
export const TAKE_CODE = new Script(`local v = redis.call('HMGET', KEYS[1], 'r', 't')
if not v[1] then return false end
if v[2] then return { 1, v[1] } end
redis.call('HSET', KEYS[1], 't', '1')
return { 0, v[1] }`);

/**
 * A grant, until its expiry. KEYS: its hash. ARGV: the JSON, the current refresh token's digest, the
 * subject, the time to live, its revision.
 */
export const PUT_GRANT = new Script(`redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'r', ARGV[1], 'h', ARGV[2], 's', ARGV[3], 'v', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`);

/** KEYS: a grant's hash. Its JSON, or false. */
export const GET_GRANT = new Script(`return redis.call('HGET', KEYS[1], 'r')`);

/**
 * Replaces a grant only where its refresh digest and its revision are still the ones expected (a grant
 * written before revisions has none: 0). KEYS: its hash. ARGV: the expected digest, the JSON, the new
 * digest, the time to live, the expected revision, the new one. 1 when replaced; 0 when another write
 * won (a rotation, an upstream refresh saved) or the grant is gone (nothing written).
 */
export const REPLACE_GRANT = new Script(`local v = redis.call('HMGET', KEYS[1], 'h', 'v')
if v[1] ~= ARGV[1] or (v[2] or '0') ~= ARGV[5] then return 0 end
redis.call('HSET', KEYS[1], 'r', ARGV[2], 'h', ARGV[3], 'v', ARGV[6])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`);

/** KEYS: a grant's hash. Deletes it; its subject, or false when it was not there. */
export const DELETE_GRANT = new Script(`local s = redis.call('HGET', KEYS[1], 's')
redis.call('DEL', KEYS[1])
return s`);

/**
 * Makes a subject's index expire with its last grant. Called with `now` (the instance's clock, the
 * clock of the scores) in scope.
 */
const KEEP = `local function keep(key)
  local top = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if top[2] then redis.call('PEXPIRE', key, math.max(1, tonumber(top[2]) - now)) end
end`;

/**
 * Adds a grant to its subject's index (ids scored by the grant's expiry). KEYS: the index. ARGV: now,
 * the expiry, the id, the most grants a subject keeps. Drops expired ids; past the cap, returns the ids
 * that expire first (never the one added), left in the index: their grants are to be deleted, and
 * each id leaves the index only once its grant is gone.
 */
export const INDEX_ADD = new Script(`local now = tonumber(ARGV[1])
${KEEP}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], 'GT', ARGV[2], ARGV[3])
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[4])
local dropped = {}
if over > 0 then
  for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, over)) do
    if #dropped < over and id ~= ARGV[3] then dropped[#dropped + 1] = id end
  end
end
keep(KEYS[1])
return dropped`);

/**
 * Pushes a grant's expiry on in its subject's index, before the grant itself is replaced (never back;
 * never adds an id that is not there). KEYS: the index. ARGV: now, the expiry, the id.
 */
export const INDEX_PUSH = new Script(`local now = tonumber(ARGV[1])
${KEEP}
local n = redis.call('ZADD', KEYS[1], 'XX', 'GT', 'CH', ARGV[2], ARGV[3])
if n > 0 then keep(KEYS[1]) end
return n`);

/** KEYS: a subject's index. ARGV: now. The ids of grants not yet expired. */
export const INDEX_LIST = new Script(`return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf')`);

/** KEYS: a subject's index. ARGV: the id. */
export const INDEX_REMOVE = new Script(`return redis.call('ZREM', KEYS[1], ARGV[1])`);

/**
 * Writes the signing keys only where the stored version is still the one expected. KEYS: their hash.
 * ARGV: the expected version ("" for none yet), the JSON, the new version, the time to live. 1 when
 * written, else 0.
 */
export const CAS_KEYS = new Script(`local v = redis.call('HGET', KEYS[1], 'v')
if ARGV[1] == '' then
  if v then return 0 end
elseif v ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'v', ARGV[3], 'r', ARGV[2], 'i', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`);

/** One hit in a fixed window. KEYS: the counter. ARGV: the window. The count so far in the window. */
export const HIT = new Script(`local n = redis.call('INCR', KEYS[1])
if n == 1 or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`);
