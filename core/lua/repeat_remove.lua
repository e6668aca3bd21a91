-- repeat_remove (echomq:2.1.0): take a repeatable job off the schedule and
-- delete its record (the reference's repeat_cancel). Jobs it already fired
-- are not touched.
-- KEYS[1] 'emq:{q}:repeat'  KEYS[2] 'emq:{q}:repeat:<name>'  ARGV[1] name
-- Answer: 1 removed | 0 there was no such repeat
local unscheduled = redis.call('ZREM', KEYS[1], ARGV[1])
local deleted = redis.call('DEL', KEYS[2])
if unscheduled + deleted > 0 then
  return 1
end
return 0
