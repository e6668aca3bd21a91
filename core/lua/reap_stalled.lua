-- reap_stalled (echomq:2.1.0): reap with a stall cap, so a job that kills its
-- worker (OOM, SIGKILL, a crash in native code) cannot loop forever. Every
-- active job whose lease deadline <= server-now leaves active and counts one
-- stall in its row (field `stalled`). At the cap it goes to dead with
-- last_error 'stalled' and metrics:failed +1; below it, back to pending with
-- attempts untouched (the next claim mints a new token; the old holder is
-- stale, and a holder of a dead job is refused by complete/retry/release).
-- KEYS[1] active  KEYS[2] pending  KEYS[3] dead  KEYS[4] metrics:failed
-- ARGV[1] queue base 'emq:{q}:'  ARGV[2] limit  ARGV[3] max stalls (>= 1)
-- Nothing half-written: every lapsed job's row (absent is debris, as before),
-- and pending, dead and metrics:failed when a row will be moved, are checked
-- by the type guard before the first write, so a key of another type
-- answers WRONGTYPE and nothing is written.
-- Answer: {{recovered ids...}, {dead-lettered ids...}}
local function wrongtype(key, want)
  local t = redis.call('TYPE', key).ok
  if t ~= 'none' and t ~= want then
    return 'WRONGTYPE ' .. key .. ' holds a ' .. t .. ', not a ' .. want
  end
  return nil, t
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cap = tonumber(ARGV[3])
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
local rows, any = {}, false
for i, id in ipairs(ids) do
  local bad, kind = wrongtype(ARGV[1] .. 'job:' .. id, 'hash')
  if bad then return redis.error_reply(bad) end
  rows[i] = kind == 'hash'
  any = any or rows[i]
end
if any then
  local bad = wrongtype(KEYS[2], 'zset') or wrongtype(KEYS[3], 'zset') or wrongtype(KEYS[4], 'hash')
  if bad then return redis.error_reply(bad) end
end
local recovered = {}
local dead = {}
for i, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  local row = ARGV[1] .. 'job:' .. id
  -- An active member without a row is debris: dropped, never made a ghost row.
  if rows[i] then
    local stalls = redis.call('HINCRBY', row, 'stalled', 1)
    if stalls >= cap then
      redis.call('HSET', row, 'state', 'dead', 'last_error', 'stalled')
      redis.call('ZADD', KEYS[3], 0, id)
      redis.call('HINCRBY', KEYS[4], 'count', 1)
      dead[#dead + 1] = id
    else
      redis.call('HSET', row, 'state', 'pending')
      redis.call('ZADD', KEYS[2], 0, id)
      recovered[#recovered + 1] = id
    end
  end
end
return {recovered, dead}
