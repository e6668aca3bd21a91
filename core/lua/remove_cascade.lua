-- remove_cascade (echomq:2.1.0): remove exactly as remove does (same checks,
-- same answers), and delete the job's log and kept result with its row (the
-- 2.0.0 remove predates them and leaves both behind).
-- KEYS[1] row  KEYS[2] pending  KEYS[3] schedule  KEYS[4] dead  KEYS[5] active
-- KEYS[6] logs  KEYS[7] result
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
redis.call('DEL', KEYS[1], KEYS[6], KEYS[7])
return 'ok'
