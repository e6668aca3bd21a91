-- remove_routed (echomq:2.2.0): remove_cascade exactly (same checks, same
-- answers), and the id leaves prio too: a job waits in pending or, with a
-- priority, in prio (echomq:2.2.0).
-- KEYS[1] row  KEYS[2] pending  KEYS[3] schedule  KEYS[4] dead  KEYS[5] active
-- KEYS[6] logs  KEYS[7] result  KEYS[8] prio
-- ARGV[1] id
-- Answer: 'ok' | 'gone' | 'active'.
-- Nothing half-written: the row and the dedup key are read, and schedule and
-- dead and prio checked by the type guard, before the first write (pending's ZREM),
-- so a key of another type answers WRONGTYPE and nothing is written.
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
local row = redis.call('HMGET', KEYS[1], 'state', 'did')
local state = row[1]
if not state then
  return 'gone'
end
if state == 'active' or redis.call('ZSCORE', KEYS[5], ARGV[1]) then
  return 'active'
end
local dedup = taken(string.sub(KEYS[1], 1, #KEYS[1] - #ARGV[1] - 4), ARGV[1], row[2])
local bad = wrongtype(KEYS[3], 'zset') or wrongtype(KEYS[4], 'zset') or wrongtype(KEYS[8], 'zset')
if bad then return redis.error_reply(bad) end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('ZREM', KEYS[8], ARGV[1])
redis.call('DEL', KEYS[1], KEYS[6], KEYS[7])
if dedup then
  redis.call('DEL', dedup)
end
return 'ok'
