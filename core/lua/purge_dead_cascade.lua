-- purge_dead_cascade (echomq:2.1.0): purge_dead exactly (same KEYS, ARGV and
-- answer), and delete each purged job's dedup key while it still names the
-- job (the 2.0.0 purge_dead predates dedup): a dead job's key is released
-- (enqueue_dedup overwrites it), and goes with the row at retention.
-- Deletes up to N of the oldest dead jobs (rows and logs). Dead
-- members all score 0, so rank order is id order is mint-time order. A job
-- goes when it was minted before the bound, or while the set is longer than
-- the length to keep; both select a prefix, so the longer prefix is taken.
-- KEYS[1] dead
-- ARGV[1] queue base 'emq:{q}:'  ARGV[2] limit
-- ARGV[3] exclusive lex bound '(JOB...' (age) or '-' (no age bound)
-- ARGV[4] length to keep, or -1 (no length bound)
-- Answer: {members taken from the set, jobs deleted} (always equal here; the
-- shape of drain's answer).
-- Nothing half-written: every row's 'did' (and its dedup key) is read before
-- the first write, so a row or dedup key of another type answers WRONGTYPE
-- and nothing is written (the set was trimmed first, then the walk failed).
-- The dedup key the job took (row field 'did', written by enqueue_dedup), if
-- it still names this job (a key a later job took over is that job's): read
-- before the first write, deleted with the row.
local function taken(base, id, did)
  if did then
    local key = base .. 'de:' .. did
    if redis.call('GET', key) == id then
      return key
    end
  end
end
local limit = tonumber(ARGV[2])
local n = 0
if ARGV[3] ~= '-' then
  n = #redis.call('ZRANGEBYLEX', KEYS[1], '-', ARGV[3], 'LIMIT', 0, limit)
end
local keep = tonumber(ARGV[4])
if keep >= 0 then
  local excess = redis.call('ZCARD', KEYS[1]) - keep
  if excess > n then
    n = excess
  end
end
if n > limit then
  n = limit
end
if n <= 0 then
  return {0, 0}
end
local ids = redis.call('ZRANGE', KEYS[1], 0, n - 1)
local dedup = {}
for i, id in ipairs(ids) do
  dedup[i] = taken(ARGV[1], id, redis.call('HGET', ARGV[1] .. 'job:' .. id, 'did')) or false
end
redis.call('ZREM', KEYS[1], unpack(ids))
for i, id in ipairs(ids) do
  local row = ARGV[1] .. 'job:' .. id
  if dedup[i] then
    redis.call('DEL', dedup[i])
  end
  redis.call('DEL', row, row .. ':logs')
end
return {#ids, #ids}
