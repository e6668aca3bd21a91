-- enqueue_priority (echomq:2.2.0): enqueue_checked for a job with a priority.
-- The id waits in `prio` (not pending), scored -priority, so a rank read
-- (ZRANGE) yields the highest priority first and, within one priority, the
-- oldest id first (equal scores order by member bytes = mint order). The row
-- records the priority (field 'priority'), so every script that puts the job
-- back where it waits routes it to `prio` again.
-- Act order as enqueue: kind policy, existence, write; the ZADD is the first
-- write (a prio key of another type is refused before anything is written).
-- KEYS[1] row  KEYS[2] prio
-- ARGV[1] id  ARGV[2] payload  ARGV[3] priority (1..1000000)
-- Answer: 1 created | 0 the row existed
if string.sub(ARGV[1], 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('ZADD', KEYS[2], -tonumber(ARGV[3]), ARGV[1])
redis.call('HSET', KEYS[1], 'state', 'pending', 'attempts', '0', 'payload', ARGV[2],
  'priority', ARGV[3])
return 1
