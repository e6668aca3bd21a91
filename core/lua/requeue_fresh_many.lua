-- requeue_fresh_many (echomq:2.1.0): return up to N of the oldest dead jobs to
-- pending, each exactly as requeue_fresh does (attempts and stalled reset,
-- last_error cleared).
-- KEYS[1] dead  KEYS[2] pending
-- ARGV[1] queue base 'emq:{q}:'  ARGV[2] limit
-- Answer: {members taken from the dead set, jobs moved to pending}.
local ids = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
if #ids == 0 then
  return {0, 0}
end
redis.call('ZREM', KEYS[1], unpack(ids))
local moved = 0
for _, id in ipairs(ids) do
  local row = ARGV[1] .. 'job:' .. id
  if redis.call('EXISTS', row) == 1 then
    redis.call('HSET', row, 'state', 'pending', 'attempts', '0')
    redis.call('HDEL', row, 'last_error', 'stalled')
    redis.call('ZADD', KEYS[2], 0, id)
    moved = moved + 1
  end
end
return {#ids, moved}
