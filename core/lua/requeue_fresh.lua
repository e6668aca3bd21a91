-- requeue_fresh (echomq:2.1.0): requeue_dead for a fresh run. A dead job goes
-- back to pending with attempts and stalled reset to 0 (the 2.1.0 claim caps
-- attempts, so a job that died by using them up would otherwise be
-- dead-lettered again without running); last_error is cleared.
-- KEYS[1] dead  KEYS[2] row  KEYS[3] pending
-- ARGV[1] id
-- Answer: 'ok' | 'notdead'.
-- Nothing half-written: the row and pending are checked by the type guard
-- before the first write (dead's ZREM), so a key of another type answers
-- WRONGTYPE and nothing is written.
local function wrongtype(key, want)
  local t = redis.call('TYPE', key).ok
  if t ~= 'none' and t ~= want then
    return 'WRONGTYPE ' .. key .. ' holds a ' .. t .. ', not a ' .. want
  end
  return nil, t
end
if redis.call('ZSCORE', KEYS[1], ARGV[1]) == false then
  return 'notdead'
end
local bad, kind = wrongtype(KEYS[2], 'hash')
if not bad and kind == 'none' then
  return 'notdead'
end
bad = bad or wrongtype(KEYS[3], 'zset')
if bad then return redis.error_reply(bad) end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], 'state', 'pending', 'attempts', '0')
redis.call('HDEL', KEYS[2], 'last_error', 'stalled')
redis.call('ZADD', KEYS[3], 0, ARGV[1])
return 'ok'
