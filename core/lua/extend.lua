-- extend: renew a held job's lease to server-now + lease, only while it is
-- still in active (a job reaped back to pending has lost its lease).
-- KEYS[1] active  KEYS[2] row
-- ARGV[1] id  ARGV[2] token  ARGV[3] lease ms
-- Answer: 'ok' | 'lost' | 'gone'; EMQSTALE on a token mismatch.
local att = redis.call('HGET', KEYS[2], 'attempts')
if not att then
  return 'gone'
end
if att ~= ARGV[2] then return redis.error_reply('EMQSTALE extend token mismatch') end
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 'lost'
end
local t = redis.call('TIME')
local deadline = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], 'XX', deadline, ARGV[1])
return 'ok'
