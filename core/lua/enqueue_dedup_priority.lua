-- enqueue_dedup_priority (echomq:2.2.0): enqueue_dedup for a job with a
-- priority: the same checks and answers; the new job waits in `prio` scored
-- -priority and its row records 'priority' beside 'did'.
-- KEYS[1] row  KEYS[2] prio  KEYS[3] dedup key 'emq:{q}:de:<dedup id>'
-- ARGV[1] id  ARGV[2] payload  ARGV[3] queue base 'emq:{q}:'  ARGV[4] ttl ms ('0' = none)
-- ARGV[5] priority (1..1000000)
-- Answer: {1, id} created | {0, the id already holding the key (or the existing row's id)}
if string.sub(ARGV[1], 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
local holder = redis.call('GET', KEYS[3])
if holder then
  local state = redis.call('HGET', ARGV[3] .. 'job:' .. holder, 'state')
  if state and state ~= 'dead' then
    return {0, holder}
  end
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {0, ARGV[1]}
end
local did = string.sub(KEYS[3], #ARGV[3] + 4)
redis.call('ZADD', KEYS[2], -tonumber(ARGV[5]), ARGV[1])
redis.call('HSET', KEYS[1], 'state', 'pending', 'attempts', '0', 'payload', ARGV[2],
  'did', did, 'priority', ARGV[5])
local ttl = tonumber(ARGV[4])
if ttl > 0 then
  redis.call('SET', KEYS[3], ARGV[1], 'PX', ttl)
else
  redis.call('SET', KEYS[3], ARGV[1])
end
return {1, ARGV[1]}
