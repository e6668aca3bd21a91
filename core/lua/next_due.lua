-- next_due (echomq:2.1.0): how long until the worker's pumps have work, so an
-- idle worker runs promote, reap and the repeat pump when something falls due
-- instead of on a fixed beat (one read-only call instead of three pump
-- scripts per beat).
-- KEYS[1] schedule  KEYS[2] active  KEYS[3] repeat
-- Answer: {ms until the earliest scheduled job is due, ms until the earliest
-- lease lapses, ms until the earliest repeat slot}: 0 when already due, -1
-- when the set is empty.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i = 1, 3 do
  local first = redis.call('ZRANGE', KEYS[i], 0, 0, 'WITHSCORES')
  if #first == 0 then
    out[i] = -1
  else
    local wait = math.floor(tonumber(first[2]) - now)
    if wait < 0 then wait = 0 end
    out[i] = wait
  end
end
return out
