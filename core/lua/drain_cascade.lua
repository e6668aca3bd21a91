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
-- The dedup key the job took (row field 'did', written by enqueue_dedup):
-- deleted with the row while it still names this job (a key a later job
-- took over is that job's).
local function release(base, id, did)
  if did then
    local key = base .. 'de:' .. did
    if redis.call('GET', key) == id then
      redis.call('DEL', key)
    end
  end
end
local ids = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
if #ids == 0 then
  return {0, 0}
end
redis.call('ZREM', KEYS[1], unpack(ids))
local deleted = 0
for _, id in ipairs(ids) do
  local row = ARGV[1] .. 'job:' .. id
  local held = redis.call('HMGET', row, 'state', 'did')
  if held[1] == ARGV[3] then
    redis.call('DEL', row, row .. ':logs')
    release(ARGV[1], id, held[2])
    deleted = deleted + 1
  end
end
return {#ids, deleted}
