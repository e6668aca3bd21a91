-- schedule_priority (echomq:2.2.0): schedule_checked for a job with a
-- priority: the row records it (field 'priority'), and promote_routed moves
-- the job into `prio` (not pending) when its time comes.
-- KEYS[1] row  KEYS[2] schedule
-- ARGV[1] id  ARGV[2] payload  ARGV[3] 'at' | 'in'  ARGV[4] run-at ms (at) or delay ms (in)
-- ARGV[5] priority (1..1000000)
-- Answer: 1 created | 0 the row existed
if string.sub(ARGV[1], 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
local run_at = tonumber(ARGV[4])
if ARGV[3] == 'in' then
  local t = redis.call('TIME')
  run_at = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + run_at
end
redis.call('ZADD', KEYS[2], run_at, ARGV[1])
redis.call('HSET', KEYS[1], 'state', 'scheduled', 'attempts', '0', 'payload', ARGV[2],
  'priority', ARGV[5])
return 1
