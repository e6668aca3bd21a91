-- reap_routed (echomq:2.2.0): reap_checked, routing each lapsed job back to
-- where it waits by its row (route below): a prioritized job into prio, any
-- other into pending. attempts is untouched, so the next claim mints a new
-- token. Nothing half-written, as promote_routed.
-- KEYS[1] active  KEYS[2] pending  KEYS[3] prio
-- ARGV[1] queue base 'emq:{q}:'  ARGV[2] limit
-- Answer: how many moved.
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
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
local rows, into, score, seen = {}, {}, {}, {}
for i, id in ipairs(ids) do
  local row = ARGV[1] .. 'job:' .. id
  local bad, kind = wrongtype(row, 'hash')
  if bad then return redis.error_reply(bad) end
  rows[i] = kind == 'hash'
  if rows[i] then
    into[i], score[i] = route(row, KEYS[2], KEYS[3])
    if not seen[into[i]] then
      seen[into[i]] = true
      bad = wrongtype(into[i], 'zset')
      if bad then return redis.error_reply(bad) end
    end
  end
end
local moved = 0
for i, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  if rows[i] then
    redis.call('HSET', ARGV[1] .. 'job:' .. id, 'state', 'pending')
    redis.call('ZADD', into[i], score[i], id)
    moved = moved + 1
  end
end
return moved
