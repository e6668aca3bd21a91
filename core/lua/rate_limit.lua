-- rate_limit (echomq:2.1.0): a handler asks to be rate limited (say after an
-- HTTP 429). Claims on the queue pause for `ms` (meta.rate_limited_until =
-- server now + ms; a later one already in place is kept), and the held job
-- waits out the pause in schedule without counting an attempt (attempts -1
-- undoes its claim, so max attempts are not spent on a limit).
-- The holder's settlement is refused from here on: the job is not held
-- (state scheduled) and its attempts no longer match the token, so a late
-- complete/retry cannot touch it; its next claim hands out the same token.
-- KEYS[1] active  KEYS[2] row  KEYS[3] schedule  KEYS[4] meta
-- ARGV[1] id  ARGV[2] token  ARGV[3] pause ms
-- Nothing half-written: meta is read, and schedule checked by the type
-- guard, before the first write (active's ZREM), so a key of another type
-- answers WRONGTYPE and nothing is written.
-- Answer: 'ok'; EMQSTALE when gone, mismatched or not active.
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
if att ~= ARGV[2] then return redis.error_reply('EMQSTALE rate_limit token mismatch') end
local state = redis.call('HGET', KEYS[2], 'state')
if state ~= 'active' then
  return redis.error_reply('EMQSTALE rate_limit job not held (' .. tostring(state) .. ')')
end
local ms = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local until_ms = tonumber(redis.call('HGET', KEYS[4], 'rate_limited_until') or '0') or 0
local bad = wrongtype(KEYS[3], 'zset')
if bad then return redis.error_reply(bad) end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HINCRBY', KEYS[2], 'attempts', -1)
redis.call('HSET', KEYS[2], 'state', 'scheduled')
redis.call('ZADD', KEYS[3], now + ms, ARGV[1])
if until_ms < now + ms then
  redis.call('HSET', KEYS[4], 'rate_limited_until', now + ms)
end
return 'ok'
