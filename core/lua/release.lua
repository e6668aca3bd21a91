-- release: hand a held job back to pending, unrun, now (a stopping worker's
-- prefetched jobs, and handlers that outlived the grace period). attempts is
-- untouched, so the next claim mints a new token and this holder is stale.
-- KEYS[1] active  KEYS[2] row  KEYS[3] pending
-- ARGV[1] id  ARGV[2] token
-- Answer: 1; EMQSTALE when gone, mismatched or not active.
local att = redis.call('HGET', KEYS[2], 'attempts')
if not att then
  return redis.error_reply('EMQSTALE job gone')
end
if att ~= ARGV[2] then return redis.error_reply('EMQSTALE release token mismatch') end
local state = redis.call('HGET', KEYS[2], 'state')
if state ~= 'active' then
  return redis.error_reply('EMQSTALE release job not held (' .. tostring(state) .. ')')
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], 'state', 'pending')
redis.call('ZADD', KEYS[3], 0, ARGV[1])
return 1
