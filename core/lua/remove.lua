-- remove: delete a job that is not active, from its row and every set.
-- KEYS[1] row  KEYS[2] pending  KEYS[3] schedule  KEYS[4] dead  KEYS[5] active
-- ARGV[1] id
-- Answer: 'ok' | 'gone' | 'active'.
local state = redis.call('HGET', KEYS[1], 'state')
if not state then
  return 'gone'
end
if state == 'active' or redis.call('ZSCORE', KEYS[5], ARGV[1]) then
  return 'active'
end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('DEL', KEYS[1])
return 'ok'
