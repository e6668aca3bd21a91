-- enqueue_checked (echomq:2.1.0): enqueue exactly (same KEYS, ARGV, answers
-- and refusal), writing pending before the row. A script that fails a
-- command keeps the writes it made before it: enqueue's ZADD came after its
-- HSET, so a pending key of another type (WRONGTYPE) left the row behind in
-- no set. Here the ZADD is the first write, so its refusal writes nothing,
-- and the HSET after it cannot fail (the row is absent).
-- KEYS[1] row  KEYS[2] pending
-- ARGV[1] id  ARGV[2] payload
-- Answer: 1 created | 0 the row existed
if string.sub(ARGV[1], 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('ZADD', KEYS[2], 0, ARGV[1])
redis.call('HSET', KEYS[1], 'state', 'pending', 'attempts', '0', 'payload', ARGV[2])
return 1
