-- complete_many: settle many held jobs as done in one call. Each job's token
-- is checked exactly as complete checks it; one job's refusal does not stop
-- the others.
-- KEYS[1] active  KEYS[2] pending  KEYS[3] metrics:completed
-- ARGV[1] queue base 'emq:{q}:'  ARGV[2], ARGV[3], ... id, token pairs
-- Answer: one verdict per job, in order: 'ok' | 'gone' | 'EMQSTALE <detail>'
local out = {}
local rows = {}
local ids = {}
local reaped = {}
for i = 2, #ARGV, 2 do
  local id = ARGV[i]
  local row = ARGV[1] .. 'job:' .. id
  local held = redis.call('HMGET', row, 'attempts', 'state')
  if not held[1] then
    out[#out + 1] = 'gone'
  elseif held[1] ~= ARGV[i + 1] then
    out[#out + 1] = 'EMQSTALE complete token mismatch'
  elseif held[2] ~= 'active' and held[2] ~= 'pending' then
    out[#out + 1] = 'EMQSTALE complete job not held (' .. tostring(held[2]) .. ')'
  else
    rows[#rows + 1] = row
    ids[#ids + 1] = id
    if held[2] == 'pending' then
      reaped[#reaped + 1] = id
    end
    out[#out + 1] = 'ok'
  end
end
if #ids > 0 then
  redis.call('ZREM', KEYS[1], unpack(ids))
  redis.call('DEL', unpack(rows))
  redis.call('HINCRBY', KEYS[3], 'count', #ids)
end
if #reaped > 0 then
  redis.call('ZREM', KEYS[2], unpack(reaped))
end
return out
