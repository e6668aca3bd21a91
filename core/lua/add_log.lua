-- add_log (echomq:2.1.0): append one line to a job's log, the LIST
-- emq:{q}:job:<id>:logs (the reference's layout), keeping the newest `max`
-- lines. Only while the job has a row: a log written after its job is gone
-- would never be deleted (the 2.1.0 settle and delete scripts delete the log
-- with the row, or give it the kept result's TTL). The log of a live row never
-- expires (PERSIST undoes a TTL left by an earlier job under the same id).
-- KEYS[1] row  KEYS[2] logs
-- ARGV[1] line  ARGV[2] max lines (>= 1)
-- Answer: the log's length after the append; 'gone' when there is no row.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 'gone'
end
local n = redis.call('RPUSH', KEYS[2], ARGV[1])
local keep = tonumber(ARGV[2])
if n > keep then
  redis.call('LTRIM', KEYS[2], -keep, -1)
  n = keep
end
redis.call('PERSIST', KEYS[2])
return n
