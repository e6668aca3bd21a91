-- repeat_read (echomq:2.1.0): read repeatable jobs with their records and the
-- server's clock, in one round trip and one snapshot. Mode 'due': the names
-- whose slot is at or before TIME (what a pump fires next); 'all': every
-- repeat by next slot (list_repeats). Writes nothing.
-- KEYS[1] 'emq:{q}:repeat'
-- ARGV[1] queue base 'emq:{q}:'  ARGV[2] 'due' | 'all'  ARGV[3] limit
-- Answer: {server now (ms), {name, slot, {field, value, ...}}, ...}
-- (a member whose record is missing answers an empty field list)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local listed
if ARGV[2] == 'due' then
  listed = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[3]))
else
  listed = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[3]) - 1, 'WITHSCORES')
end
local answer = {now}
for i = 1, #listed, 2 do
  local record = redis.call('HGETALL', ARGV[1] .. 'repeat:' .. listed[i])
  answer[#answer + 1] = {listed[i], listed[i + 1], record}
end
return answer
