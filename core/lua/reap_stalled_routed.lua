-- reap_stalled_routed (echomq:2.2.0): reap_stalled, routing each recovered
-- job back to where it waits by its row (route below): a prioritized job
-- into prio, any other into pending. Same ARGV and answer; one more key.
-- Nothing half-written: every lapsed job's row (absent is debris, dropped),
-- the set each recovered row goes into, and dead and metrics:failed when a
-- row will be moved, are checked by the type guard before the first write.
-- KEYS[1] active  KEYS[2] pending  KEYS[3] dead  KEYS[4] metrics:failed  KEYS[5] prio
-- ARGV[1] queue base 'emq:{q}:'  ARGV[2] limit  ARGV[3] max stalls (>= 1)
-- Answer: {{recovered ids...}, {dead-lettered ids...}}
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
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cap = tonumber(ARGV[3])
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
local rows, into, score, seen, any = {}, {}, {}, {}, false
for i, id in ipairs(ids) do
  local row = ARGV[1] .. 'job:' .. id
  local bad, kind = wrongtype(row, 'hash')
  if bad then return redis.error_reply(bad) end
  rows[i] = kind == 'hash'
  if rows[i] then
    any = true
    into[i], score[i] = route(row, KEYS[2], KEYS[5])
    if not seen[into[i]] then
      seen[into[i]] = true
      bad = wrongtype(into[i], 'zset')
      if bad then return redis.error_reply(bad) end
    end
  end
end
if any then
  local bad = wrongtype(KEYS[3], 'zset') or wrongtype(KEYS[4], 'hash')
  if bad then return redis.error_reply(bad) end
end
local recovered = {}
local dead = {}
for i, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  local row = ARGV[1] .. 'job:' .. id
  if rows[i] then
    local stalls = redis.call('HINCRBY', row, 'stalled', 1)
    if stalls >= cap then
      redis.call('HSET', row, 'state', 'dead', 'last_error', 'stalled')
      redis.call('ZADD', KEYS[3], 0, id)
      redis.call('HINCRBY', KEYS[4], 'count', 1)
      dead[#dead + 1] = id
    else
      redis.call('HSET', row, 'state', 'pending')
      redis.call('ZADD', into[i], score[i], id)
      recovered[#recovered + 1] = id
    end
  end
end
return {recovered, dead}
