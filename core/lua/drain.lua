-- drain: delete up to N of the oldest members of one waiting set (pending, or
-- schedule) with their rows and logs. A member whose row is held (state
-- active) is only unlinked: active jobs survive a drain.
-- KEYS[1] pending | schedule
-- ARGV[1] queue base 'emq:{q}:'  ARGV[2] limit  ARGV[3] the rows' state ('pending' | 'scheduled')
-- Answer: {members taken from the set, jobs deleted} (they differ only for
-- debris members without a row, and held rows).
local ids = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
if #ids == 0 then
  return {0, 0}
end
redis.call('ZREM', KEYS[1], unpack(ids))
local deleted = 0
for _, id in ipairs(ids) do
  local row = ARGV[1] .. 'job:' .. id
  if redis.call('HGET', row, 'state') == ARGV[3] then
    redis.call('DEL', row, row .. ':logs')
    deleted = deleted + 1
  end
end
return {#ids, deleted}
