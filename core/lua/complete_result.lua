-- complete_result (echomq:2.1.0): complete exactly as complete does (same
-- token and state checks, same answers), and settle the job's log and result
-- in the same script, so nothing outlives the row by accident:
-- * keep ms = 0: the log emq:{q}:job:<id>:logs is deleted with the row (the
--   reference deletes it only on remove and drain, so it leaks);
-- * keep ms > 0: the handler's value is stored at emq:{q}:job:<id>:result
--   for that long, and the log gets the same TTL: both go together.
-- KEYS[1] active  KEYS[2] row  KEYS[3] pending  KEYS[4] metrics:completed
-- KEYS[5] logs  KEYS[6] result
-- Nothing half-written: everything is read, and the keys written after the
-- first write (pending, metrics:completed) checked by the type guard, before
-- the first write (active's ZREM), so a key of another type answers
-- WRONGTYPE and nothing is written.
-- ARGV[1] id  ARGV[2] token  ARGV[3] keep ms  ARGV[4] result value
-- Answer: 'ok' | 'gone'; EMQSTALE on a token mismatch or a job no longer held.
local function wrongtype(key, want)
  local t = redis.call('TYPE', key).ok
  if t ~= 'none' and t ~= want then
    return 'WRONGTYPE ' .. key .. ' holds a ' .. t .. ', not a ' .. want
  end
  return nil, t
end
-- The dedup key the job took (row field 'did', written by enqueue_dedup), if
-- it still names this job (a key a later job took over is that job's): read
-- before the first write, deleted with the row.
local function taken(base, id, did)
  if did then
    local key = base .. 'de:' .. did
    if redis.call('GET', key) == id then
      return key
    end
  end
end
local held = redis.call('HMGET', KEYS[2], 'attempts', 'state', 'did')
if not held[1] then
  return 'gone'
end
if held[1] ~= ARGV[2] then return redis.error_reply('EMQSTALE complete token mismatch') end
if held[2] ~= 'active' and held[2] ~= 'pending' then
  return redis.error_reply('EMQSTALE complete job not held (' .. tostring(held[2]) .. ')')
end
local dedup = taken(string.sub(KEYS[2], 1, #KEYS[2] - #ARGV[1] - 4), ARGV[1], held[3])
local bad = wrongtype(KEYS[3], 'zset') or wrongtype(KEYS[4], 'hash')
if bad then return redis.error_reply(bad) end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('DEL', KEYS[2])
if dedup then
  redis.call('DEL', dedup)
end
redis.call('HINCRBY', KEYS[4], 'count', 1)
local keep = tonumber(ARGV[3])
if keep > 0 then
  redis.call('SET', KEYS[6], ARGV[4], 'PX', keep)
  redis.call('PEXPIRE', KEYS[5], keep)
else
  redis.call('DEL', KEYS[5])
end
return 'ok'
