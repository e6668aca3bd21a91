-- enqueue_dedup (echomq:2.1.0): enqueue unless the dedup key names a live job.
-- The key (the reference's layout, a STRING holding a job id) counts as
-- released once the job it names is gone (completed or removed: no row) or
-- dead, or when its TTL lapses (throttle mode); a released key is simply
-- overwritten. Checking the named row here, in the same script as the write,
-- makes racing producers create one job, and keeps the release correct even
-- when a 2.0.0 script (which knows nothing of dedup) settled the job.
-- Act order as enqueue: kind policy, existence (dedup key, then the row), write.
-- The write puts the id in pending first: a pending key of another type is
-- refused by that ZADD (WRONGTYPE) before anything is written; the row is
-- absent and SET overwrites any type, so nothing after it can fail.
-- The row records the dedup id it took (field 'did'), so the scripts that
-- delete the row (complete_result, complete_many_result, remove_cascade,
-- drain_cascade, purge_dead_cascade) delete the key with it while it still
-- names the job: a dedup id that is never used again leaves nothing behind.
-- KEYS[1] row  KEYS[2] pending  KEYS[3] dedup key 'emq:{q}:de:<dedup id>'
-- ARGV[1] id  ARGV[2] payload  ARGV[3] queue base 'emq:{q}:'  ARGV[4] ttl ms ('0' = none)
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
redis.call('ZADD', KEYS[2], 0, ARGV[1])
redis.call('HSET', KEYS[1], 'state', 'pending', 'attempts', '0', 'payload', ARGV[2], 'did', did)
local ttl = tonumber(ARGV[4])
if ttl > 0 then
  redis.call('SET', KEYS[3], ARGV[1], 'PX', ttl)
else
  redis.call('SET', KEYS[3], ARGV[1])
end
return {1, ARGV[1]}
