-- complete_many_result (echomq:2.1.0): complete_many with complete_result's
-- handling of each job's log and result (deleted with the row, or kept for
-- `keep ms` together). Each job's token is checked exactly as complete checks
-- it; one job's refusal does not stop the others.
-- KEYS[1] active  KEYS[2] pending  KEYS[3] metrics:completed
-- ARGV[1] queue base 'emq:{q}:'  ARGV[2] keep ms
-- ARGV[3], ARGV[4], ARGV[5], ... id, token, result value triples (the value is
-- ignored when keep ms = 0)
-- Answer: one verdict per job, in order: 'ok' | 'gone' | 'EMQSTALE <detail>'
-- Nothing half-written: every job is read first (a job named twice is
-- answered 'gone' the second time, as it was once its row was deleted), then
-- the keys written after the first write (active's ZREM): metrics:completed,
-- and pending when a settled job was reaped back there, are checked by the
-- type guard, so a key of another type answers WRONGTYPE and nothing is
-- written.
local function wrongtype(key, want)
  local t = redis.call('TYPE', key).ok
  if t ~= 'none' and t ~= want then
    return 'WRONGTYPE ' .. key .. ' holds a ' .. t .. ', not a ' .. want
  end
  return nil, t
end
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
local keep = tonumber(ARGV[2])
local out = {}
local ids = {}
local settled = {}
local reaped = {}
local seen = {}
for i = 3, #ARGV, 3 do
  local id = ARGV[i]
  local row = ARGV[1] .. 'job:' .. id
  local held = redis.call('HMGET', row, 'attempts', 'state', 'did')
  if not held[1] or seen[id] then
    out[#out + 1] = 'gone'
  elseif held[1] ~= ARGV[i + 1] then
    out[#out + 1] = 'EMQSTALE complete token mismatch'
  elseif held[2] ~= 'active' and held[2] ~= 'pending' then
    out[#out + 1] = 'EMQSTALE complete job not held (' .. tostring(held[2]) .. ')'
  else
    seen[id] = true
    ids[#ids + 1] = id
    settled[#settled + 1] = {row, ARGV[i + 2], taken(ARGV[1], id, held[3])}
    if held[2] == 'pending' then
      reaped[#reaped + 1] = id
    end
    out[#out + 1] = 'ok'
  end
end
if #ids == 0 then
  return out
end
local bad = wrongtype(KEYS[3], 'hash')
if #reaped > 0 then
  bad = bad or wrongtype(KEYS[2], 'zset')
end
if bad then return redis.error_reply(bad) end
redis.call('ZREM', KEYS[1], unpack(ids))
for _, job in ipairs(settled) do
  local row = job[1]
  if keep > 0 then
    redis.call('DEL', row)
    redis.call('SET', row .. ':result', job[2], 'PX', keep)
    redis.call('PEXPIRE', row .. ':logs', keep)
  else
    redis.call('DEL', row, row .. ':logs')
  end
  if job[3] then
    redis.call('DEL', job[3])
  end
end
redis.call('HINCRBY', KEYS[3], 'count', #ids)
if #reaped > 0 then
  redis.call('ZREM', KEYS[2], unpack(reaped))
end
return out
