-- release_routed (echomq:2.2.0): release_checked, handing the job back to
-- where it waits by its row (route below): a prioritized job into prio, any
-- other into pending. Same ARGV, answer and refusals; one more key.
-- Nothing half-written: the set it goes into is checked by the type guard
-- before the first write.
-- KEYS[1] active  KEYS[2] row  KEYS[3] pending  KEYS[4] prio
-- ARGV[1] id  ARGV[2] token
-- Answer: 1; EMQSTALE when gone, mismatched or not active.
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
local att = redis.call('HGET', KEYS[2], 'attempts')
if not att then
  return redis.error_reply('EMQSTALE job gone')
end
if att ~= ARGV[2] then return redis.error_reply('EMQSTALE release token mismatch') end
local state = redis.call('HGET', KEYS[2], 'state')
if state ~= 'active' then
  return redis.error_reply('EMQSTALE release job not held (' .. tostring(state) .. ')')
end
local into, score = route(KEYS[2], KEYS[3], KEYS[4])
local bad = wrongtype(into, 'zset')
if bad then return redis.error_reply(bad) end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], 'state', 'pending')
redis.call('ZADD', into, score, ARGV[1])
return 1
