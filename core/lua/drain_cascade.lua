-- drain_cascade (echomq:2.1.0): drain exactly as drain does (same KEYS, ARGV
-- and answer), and delete each deleted job's dedup key while it names the
-- job (the 2.0.0 drain predates dedup). Deletes up to N of the oldest
-- members of one waiting set (pending, or schedule) with their rows and logs.
-- A member whose row is held (state active) is only unlinked: active jobs
-- survive a drain.
-- KEYS[1] pending | schedule
-- ARGV[1] queue base 'emq:{q}:'  ARGV[2] limit  ARGV[3] the rows' state ('pending' | 'scheduled')
-- Answer: {members taken from the set, jobs deleted} (they differ only for
-- debris members without a row, and held rows).
-- Nothing half-written: every row (and its dedup key) is read before the
-- first write, so a row of another type answers WRONGTYPE and nothing is
-- written (the set was trimmed first, then the walk failed).
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
local ids = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
if #ids == 0 then
  return {0, 0}
end
local doomed = {}
for _, id in ipairs(ids) do
  local row = ARGV[1] .. 'job:' .. id
  local held = redis.call('HMGET', row, 'state', 'did')
  if held[1] == ARGV[3] then
    doomed[#doomed + 1] = {row, taken(ARGV[1], id, held[2])}
  end
end
redis.call('ZREM', KEYS[1], unpack(ids))
for _, job in ipairs(doomed) do
  redis.call('DEL', job[1], job[1] .. ':logs')
  if job[2] then
    redis.call('DEL', job[2])
  end
end
return {#ids, #doomed}
