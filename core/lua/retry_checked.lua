-- retry_checked (echomq:2.1.0): retry exactly (same KEYS, ARGV, answers and
-- refusals), with the type guard: the keys written after the first write
-- (pending, and schedule or dead and metrics:failed, whichever the outcome
-- writes) must be absent or of their type, else WRONGTYPE and nothing is
-- written. retry removed the job from active first and then failed on them.
-- KEYS[1] active  KEYS[2] row  KEYS[3] pending  KEYS[4] schedule  KEYS[5] dead
-- KEYS[6] metrics:failed
-- ARGV[1] id  ARGV[2] token  ARGV[3] delay ms  ARGV[4] max attempts  ARGV[5] error text
-- Answer: 'scheduled' | 'dead'; EMQSTALE when gone, mismatched or not held.
local function wrongtype(key, want)
  local t = redis.call('TYPE', key).ok
  if t ~= 'none' and t ~= want then
    return 'WRONGTYPE ' .. key .. ' holds a ' .. t .. ', not a ' .. want
  end
  return nil, t
end
local att = redis.call('HGET', KEYS[2], 'attempts')
if not att then
  return redis.error_reply('EMQSTALE job gone')
end
if att ~= ARGV[2] then return redis.error_reply('EMQSTALE retry token mismatch') end
local state = redis.call('HGET', KEYS[2], 'state')
if state ~= 'active' and state ~= 'pending' then
  return redis.error_reply('EMQSTALE retry job not held (' .. tostring(state) .. ')')
end
local dead = tonumber(att) >= tonumber(ARGV[4])
local bad = wrongtype(KEYS[3], 'zset')
if dead then
  bad = bad or wrongtype(KEYS[5], 'zset') or wrongtype(KEYS[6], 'hash')
else
  bad = bad or wrongtype(KEYS[4], 'zset')
end
if bad then return redis.error_reply(bad) end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('HSET', KEYS[2], 'last_error', ARGV[5])
if dead then
  redis.call('HSET', KEYS[2], 'state', 'dead')
  redis.call('ZADD', KEYS[5], 0, ARGV[1])
  redis.call('HINCRBY', KEYS[6], 'count', 1)
  return 'dead'
end
local t = redis.call('TIME')
local run_at = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[3])
redis.call('HSET', KEYS[2], 'state', 'scheduled')
redis.call('ZADD', KEYS[4], run_at, ARGV[1])
return 'scheduled'
