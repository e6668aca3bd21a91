-- complete: settle a job as done. The token fences the settlement.
-- KEYS[1] active  KEYS[2] row  KEYS[3] pending  KEYS[4] metrics:completed
-- ARGV[1] id  ARGV[2] token
-- Answer: 'ok' | 'gone'; EMQSTALE on a token mismatch or a job no longer held.
local att = redis.call('HGET', KEYS[2], 'attempts')
if not att then
  return 'gone'
end
if att ~= ARGV[2] then return redis.error_reply('EMQSTALE complete token mismatch') end
local state = redis.call('HGET', KEYS[2], 'state')
if state ~= 'active' and state ~= 'pending' then
  return redis.error_reply('EMQSTALE complete job not held (' .. tostring(state) .. ')')
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('DEL', KEYS[2])
redis.call('HINCRBY', KEYS[4], 'count', 1)
return 'ok'
