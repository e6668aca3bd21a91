-- release_checked (echomq:2.1.0): release exactly (same KEYS, ARGV, answer
-- and refusals), with the type guard: pending, written after the first
-- write, must be absent or a ZSET, else WRONGTYPE and nothing is written
-- (release took the job out of active and then failed on it).
-- KEYS[1] active  KEYS[2] row  KEYS[3] pending
-- ARGV[1] id  ARGV[2] token
-- Answer: 1; EMQSTALE when gone, mismatched or not active.
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
if att ~= ARGV[2] then return redis.error_reply('EMQSTALE release token mismatch') end
local state = redis.call('HGET', KEYS[2], 'state')
if state ~= 'active' then
  return redis.error_reply('EMQSTALE release job not held (' .. tostring(state) .. ')')
end
local bad = wrongtype(KEYS[3], 'zset')
if bad then return redis.error_reply(bad) end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], 'state', 'pending')
redis.call('ZADD', KEYS[3], 0, ARGV[1])
return 1
