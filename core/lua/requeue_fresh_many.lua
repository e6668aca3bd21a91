-- requeue_fresh_many (echomq:2.1.0): return up to N of the oldest dead jobs to
-- pending, each exactly as requeue_fresh does (attempts and stalled reset,
-- last_error cleared).
-- KEYS[1] dead  KEYS[2] pending
-- ARGV[1] queue base 'emq:{q}:'  ARGV[2] limit
-- Answer: {members taken from the dead set, jobs moved to pending}.
-- Nothing half-written: every row (absent is debris, as before) and pending,
-- when a row will be moved into it, are checked by the type guard before the
-- first write, so a key of another type answers WRONGTYPE and nothing is
-- written.
local function wrongtype(key, want)
  local t = redis.call('TYPE', key).ok
  if t ~= 'none' and t ~= want then
    return 'WRONGTYPE ' .. key .. ' holds a ' .. t .. ', not a ' .. want
  end
  return nil, t
end
local ids = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
if #ids == 0 then
  return {0, 0}
end
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
redis.call('ZREM', KEYS[1], unpack(ids))
local moved = 0
for i, id in ipairs(ids) do
  local row = ARGV[1] .. 'job:' .. id
  if rows[i] then
    redis.call('HSET', row, 'state', 'pending', 'attempts', '0')
    redis.call('HDEL', row, 'last_error', 'stalled')
    redis.call('ZADD', KEYS[2], 0, id)
    moved = moved + 1
  end
end
return {#ids, moved}
