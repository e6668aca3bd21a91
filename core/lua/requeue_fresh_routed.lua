-- requeue_fresh_routed (echomq:2.2.0): requeue_fresh, returning the dead job
-- to where it waits by its row (route below): a prioritized job into prio,
-- any other into pending. Same ARGV and answers; one more key.
-- Nothing half-written: the row and the set it goes into are checked by the
-- type guard before the first write (dead's ZREM).
-- KEYS[1] dead  KEYS[2] row  KEYS[3] pending  KEYS[4] prio
-- ARGV[1] id
-- Answer: 'ok' | 'notdead'.
local function wrongtype(key, want)
  local t = redis.call('TYPE', key).ok
  if t ~= 'none' and t ~= want then
    return 'WRONGTYPE ' .. key .. ' holds a ' .. t .. ', not a ' .. want
  end
  return nil, t
end
-- Where a job waits (echomq:2.2.0), by its row: a 'priority' p > 0 -> prio
-- scored -p, else pending scored 0. The one routing rule of every script
-- that puts a job back; a later field (a group's lane) joins here.
local function route(row, pending, prio)
  local p = tonumber(redis.call('HGET', row, 'priority') or '0') or 0
  if p > 0 then
    return prio, -p
  end
  return pending, 0
end
if redis.call('ZSCORE', KEYS[1], ARGV[1]) == false then
  return 'notdead'
end
local bad, kind = wrongtype(KEYS[2], 'hash')
if bad then return redis.error_reply(bad) end
if kind == 'none' then
  return 'notdead'
end
local into, score = route(KEYS[2], KEYS[3], KEYS[4])
bad = wrongtype(into, 'zset')
if bad then return redis.error_reply(bad) end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], 'state', 'pending', 'attempts', '0')
redis.call('HDEL', KEYS[2], 'last_error', 'stalled')
redis.call('ZADD', into, score, ARGV[1])
return 'ok'
