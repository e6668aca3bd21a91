-- repeat_upsert (echomq:2.1.0): create or update a repeatable job's record and
-- put it on the schedule. The record is the HASH 'emq:{q}:repeat:<name>' (the
-- reference's layout: every_ms, template; plus cron, tz, start_at, end_at,
-- limit, and the fire bookkeeping count, last_slot, last_id, tag); the
-- schedule is the ZSET 'emq:{q}:repeat' of names scored by the next slot.
-- The spec is every_ms, cron, tz, start_at, end_at and limit: an upsert with
-- the same spec keeps the slot it is waiting for and its count (so a service
-- that upserts at every start does not push its schedule back), and only
-- replaces the template; a changed spec is rescheduled at ARGV[4] with count 0.
-- last_slot and last_id are kept either way: the fire script never fires a
-- slot at or before last_slot again.
-- The tag (the low 22 bits of the ids the repeat fires under, derived from the
-- name by the client) must be unique in the queue, or two repeats firing in
-- the same millisecond would derive the same id: a colliding name is refused.
-- KEYS[1] 'emq:{q}:repeat'  KEYS[2] 'emq:{q}:repeat:<name>'
-- ARGV[1] queue base 'emq:{q}:'  ARGV[2] name  ARGV[3] tag  ARGV[4] first slot (unix ms)
-- ARGV[5] template  ARGV[6] every_ms  ARGV[7] cron  ARGV[8] tz  ARGV[9] start_at
-- ARGV[10] end_at  ARGV[11] limit  (ARGV[6..11]: '' = not set)
-- Answer: {'created' | 'updated' | 'kept', the slot it waits for, the record (HGETALL)}
--       | {'collides', the other repeat's name}
for _, other in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if other ~= ARGV[2] and redis.call('HGET', ARGV[1] .. 'repeat:' .. other, 'tag') == ARGV[3] then
    return {'collides', other}
  end
end
local spec = {'every_ms', 'cron', 'tz', 'start_at', 'end_at', 'limit'}
local exists = redis.call('EXISTS', KEYS[2]) == 1
local slot = redis.call('ZSCORE', KEYS[1], ARGV[2])
if exists and slot then
  local old = redis.call('HMGET', KEYS[2], unpack(spec))
  local same = true
  for i = 1, #spec do
    if (old[i] or '') ~= ARGV[5 + i] then
      same = false
    end
  end
  if same then
    redis.call('HSET', KEYS[2], 'template', ARGV[5], 'tag', ARGV[3])
    return {'kept', slot, redis.call('HGETALL', KEYS[2])}
  end
end
local kept = redis.call('HMGET', KEYS[2], 'last_slot', 'last_id')
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], 'template', ARGV[5], 'tag', ARGV[3], 'count', '0')
for i = 1, #spec do
  if ARGV[5 + i] ~= '' then
    redis.call('HSET', KEYS[2], spec[i], ARGV[5 + i])
  end
end
if kept[1] then
  redis.call('HSET', KEYS[2], 'last_slot', kept[1], 'last_id', kept[2])
end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[2])
local record = redis.call('HGETALL', KEYS[2])
if exists then
  return {'updated', ARGV[4], record}
end
return {'created', ARGV[4], record}
