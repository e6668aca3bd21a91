-- requeue_fresh (echomq:2.1.0): requeue_dead for a fresh run. A dead job goes
-- back to pending with attempts and stalled reset to 0 (the 2.1.0 claim caps
-- attempts, so a job that died by using them up would otherwise be
-- dead-lettered again without running); last_error is cleared.
-- KEYS[1] dead  KEYS[2] row  KEYS[3] pending
-- ARGV[1] id
-- Answer: 'ok' | 'notdead'.
if redis.call('ZSCORE', KEYS[1], ARGV[1]) == false or redis.call('EXISTS', KEYS[2]) == 0 then
  return 'notdead'
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], 'state', 'pending', 'attempts', '0')
redis.call('HDEL', KEYS[2], 'last_error', 'stalled')
redis.call('ZADD', KEYS[3], 0, ARGV[1])
return 'ok'
