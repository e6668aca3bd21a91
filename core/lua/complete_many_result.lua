-- complete_many_result (echomq:2.1.0): complete_many with complete_result's
-- handling of each job's log and result (deleted with the row, or kept for
-- `keep ms` together). Each job's token is checked exactly as complete checks
-- it; one job's refusal does not stop the others.
-- KEYS[1] active  KEYS[2] pending  KEYS[3] metrics:completed
-- ARGV[1] queue base 'emq:{q}:'  ARGV[2] keep ms
-- ARGV[3], ARGV[4], ARGV[5], ... id, token, result value triples (the value is
-- ignored when keep ms = 0)
-- Answer: one verdict per job, in order: 'ok' | 'gone' | 'EMQSTALE <detail>'
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
local keep = tonumber(ARGV[2])
local out = {}
local ids = {}
local reaped = {}
for i = 3, #ARGV, 3 do
  local id = ARGV[i]
  local row = ARGV[1] .. 'job:' .. id
  local held = redis.call('HMGET', row, 'attempts', 'state', 'did')
  if not held[1] then
    out[#out + 1] = 'gone'
  elseif held[1] ~= ARGV[i + 1] then
    out[#out + 1] = 'EMQSTALE complete token mismatch'
  elseif held[2] ~= 'active' and held[2] ~= 'pending' then
    out[#out + 1] = 'EMQSTALE complete job not held (' .. tostring(held[2]) .. ')'
  else
    ids[#ids + 1] = id
    if held[2] == 'pending' then
      reaped[#reaped + 1] = id
    end
    if keep > 0 then
      redis.call('DEL', row)
      redis.call('SET', row .. ':result', ARGV[i + 2], 'PX', keep)
      redis.call('PEXPIRE', row .. ':logs', keep)
    else
      redis.call('DEL', row, row .. ':logs')
    end
    release(ARGV[1], id, held[3])
    out[#out + 1] = 'ok'
  end
end
if #ids > 0 then
  redis.call('ZREM', KEYS[1], unpack(ids))
  redis.call('HINCRBY', KEYS[3], 'count', #ids)
end
if #reaped > 0 then
  redis.call('ZREM', KEYS[2], unpack(reaped))
end
return out
