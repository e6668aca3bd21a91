-- repeat_fire (echomq:2.1.0): fire due repeatable jobs, each atomically: the
-- due check on the server clock, the enqueue under the id derived from the
-- name and the slot, and the advance of the schedule happen in this one
-- script, so two pumps racing, or a pump that died mid-fire, can never make
-- two jobs for one slot. Guards, in order: the repeat must still wait for the
-- slot the pump read (its ZSET score; else another pump fired it, or it was
-- upserted since: 'moved', nothing changes), and the slot must be due by
-- TIME ('early'). A slot at or before the record's last_slot, or whose
-- derived row already exists, was fired before: nothing is enqueued
-- ('duplicate') but the schedule still advances.
-- The next slot is the client's (cron needs a time zone database), computed
-- from the server's TIME the pump read; it must lie after the slot. Missed
-- slots are skipped, not replayed: an overdue repeat fires once, for the slot
-- it waited for, and its next slot is the first one after that TIME.
-- The repeat ends (ZREM + DEL) when there is no next slot, the next slot is
-- past end_at, or limit jobs were fired; a slot past end_at is not fired.
-- The fired row is a plain 2.0.0 row of three fields, in pending.
-- KEYS[1] 'emq:{q}:repeat'  KEYS[2] pending
-- ARGV[1] queue base 'emq:{q}:', then per repeat: name, slot, id, next slot ('' = none)
-- Answer: per repeat {outcome, id ('' unless fired/duplicate), next slot ('' = ended)}
-- outcome: 'fired' | 'duplicate' | 'moved' | 'early' | 'gone' (no record) | 'ended'
-- Nothing half-written: with the batch, every record and pending are checked
-- by the type guard before the first write (a later repeat's record, or
-- pending, of another type stopped the batch after the earlier repeats
-- fired), so a key of another type answers WRONGTYPE and nothing is written.
local function wrongtype(key, want)
  local t = redis.call('TYPE', key).ok
  if t ~= 'none' and t ~= want then
    return 'WRONGTYPE ' .. key .. ' holds a ' .. t .. ', not a ' .. want
  end
  return nil, t
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- Refuse a malformed batch before writing anything.
for i = 2, #ARGV, 4 do
  local next_slot = ARGV[i + 3]
  if string.sub(ARGV[i + 2], 1, 3) ~= 'JOB' or (next_slot ~= '' and tonumber(next_slot) <= tonumber(ARGV[i + 1])) then
    return redis.error_reply('EMQKIND repeat fire needs a JOB id and a next slot after the slot')
  end
  local bad = wrongtype(ARGV[1] .. 'repeat:' .. ARGV[i], 'hash')
  if bad then return redis.error_reply(bad) end
end
if #ARGV > 1 then
  local bad = wrongtype(KEYS[2], 'zset')
  if bad then return redis.error_reply(bad) end
end
local answers = {}
for i = 2, #ARGV, 4 do
  local name, slot, id, next_slot = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2], ARGV[i + 3]
  local record = ARGV[1] .. 'repeat:' .. name
  local score = redis.call('ZSCORE', KEYS[1], name)
  if not score or tonumber(score) ~= slot then
    answers[#answers + 1] = {'moved', '', score or ''}
  elseif slot > now then
    answers[#answers + 1] = {'early', '', score}
  elseif redis.call('EXISTS', record) == 0 then
    redis.call('ZREM', KEYS[1], name)
    answers[#answers + 1] = {'gone', '', ''}
  else
    local f = redis.call('HMGET', record, 'template', 'end_at', 'limit', 'count', 'last_slot')
    local end_at, limit, count = tonumber(f[2]), tonumber(f[3]), tonumber(f[4]) or 0
    local outcome
    if (end_at and slot > end_at) or (limit and count >= limit) then
      outcome = 'ended'
      next_slot = ''
      id = ''
    elseif (f[5] and tonumber(f[5]) >= slot) or redis.call('EXISTS', ARGV[1] .. 'job:' .. id) == 1 then
      outcome = 'duplicate'
    else
      local row = ARGV[1] .. 'job:' .. id
      redis.call('HSET', row, 'state', 'pending', 'attempts', '0', 'payload', f[1] or '')
      redis.call('ZADD', KEYS[2], 0, id)
      count = count + 1
      redis.call('HSET', record, 'count', count, 'last_slot', ARGV[i + 1], 'last_id', id)
      outcome = 'fired'
    end
    if next_slot == '' or (end_at and tonumber(next_slot) > end_at) or (limit and count >= limit) then
      redis.call('ZREM', KEYS[1], name)
      redis.call('DEL', record)
      next_slot = ''
    else
      redis.call('ZADD', KEYS[1], next_slot, name)
    end
    answers[#answers + 1] = {outcome, id, next_slot}
  end
end
return answers
