-- reap_checked (echomq:2.1.0): reap exactly (same KEYS, ARGV and answer),
-- with the type guard of promote_checked: every lapsed job's row (absent is
-- debris, as before) and pending, when a row will be moved into it, must be
-- of its type before anything is written, else WRONGTYPE and nothing is
-- written. attempts is untouched, so the next claim mints a new token.
-- KEYS[1] active  KEYS[2] pending
-- ARGV[1] queue base 'emq:{q}:'  ARGV[2] limit
-- Answer: how many moved.
local function wrongtype(key, want)
  local t = redis.call('TYPE', key).ok
  if t ~= 'none' and t ~= want then
    return 'WRONGTYPE ' .. key .. ' holds a ' .. t .. ', not a ' .. want
  end
  return nil, t
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
local rows, any = {}, false
for i, id in ipairs(ids) do
  local bad, kind = wrongtype(ARGV[1] .. 'job:' .. id, 'hash')
  if bad then return redis.error_reply(bad) end
  rows[i] = kind == 'hash'
  any = any or rows[i]
end
if any then
  local bad = wrongtype(KEYS[2], 'zset')
  if bad then return redis.error_reply(bad) end
end
local moved = 0
for i, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  if rows[i] then
    redis.call('HSET', ARGV[1] .. 'job:' .. id, 'state', 'pending')
    redis.call('ZADD', KEYS[2], 0, id)
    moved = moved + 1
  end
end
return moved
