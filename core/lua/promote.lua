-- promote: move due scheduled jobs (run-at <= server-now) to pending.
-- KEYS[1] schedule  KEYS[2] pending
-- ARGV[1] queue base 'emq:{q}:'  ARGV[2] limit
-- Answer: how many moved.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
local moved = 0
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  local row = ARGV[1] .. 'job:' .. id
  if redis.call('EXISTS', row) == 1 then
    redis.call('HSET', row, 'state', 'pending')
    redis.call('ZADD', KEYS[2], 0, id)
    moved = moved + 1
  end
end
return moved
