-- claim_priority (echomq:2.2.0): claim_guarded exactly (the same guards,
-- ARGV, answers and refusals), serving prio before pending: the jobs handed
-- out are the first of prio by rank (highest priority first, oldest first
-- within one priority), then, for what is left of max jobs, the first of
-- pending (oldest first). A job without a priority is claimed exactly as by
-- claim_guarded.
-- A prio member whose row is missing, is not 'pending', or has no
-- 'priority' is debris (a late holder settled a reaped job: a 2.1.0 settle
-- removes the id from pending only): it leaves prio and is not handed out.
-- KEYS[1] pending  KEYS[2] active  KEYS[3] meta  KEYS[4] dead  KEYS[5] metrics:failed
-- KEYS[6] limiter  KEYS[7] wake  KEYS[8] prio
-- Wake upkeep as claim_guarded, over pending and prio together.
-- Nothing half-written: both sets are read (ZRANGE) and every taken row read,
-- and active (dead, metrics:failed when a job is capped) checked by the type
-- guard, before the first write.
-- ARGV[1] queue base 'emq:{q}:'  ARGV[2] lease ms  ARGV[3] max jobs  ARGV[4] max attempts (0 = no cap)
-- Answer: flat array id, payload, token, ...; or the error EMQRATE <wait ms> <why>.
local function wrongtype(key, want)
  local t = redis.call('TYPE', key).ok
  if t ~= 'none' and t ~= want then
    return 'WRONGTYPE ' .. key .. ' holds a ' .. t .. ', not a ' .. want
  end
  return nil, t
end
if redis.call('HEXISTS', KEYS[3], 'paused') == 1 then
  redis.call('DEL', KEYS[7])
  return {}
end
local limits = redis.call('HMGET', KEYS[3], 'concurrency', 'max', 'duration', 'rate_limited_until')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local until_ms = tonumber(limits[4] or '0') or 0
if until_ms > now then
  return redis.error_reply('EMQRATE ' .. (until_ms - now) .. ' rate limited by a handler')
end
local want = tonumber(ARGV[3])
local ceiling = tonumber(limits[1] or '0') or 0
if ceiling > 0 then
  local room = ceiling - redis.call('ZCARD', KEYS[2])
  if room <= 0 then
    return redis.error_reply('EMQRATE 0 at concurrency ceiling')
  end
  if room < want then want = room end
end
local max = tonumber(limits[2] or '0') or 0
local used = tonumber(redis.call('GET', KEYS[6]) or '0') or 0
if max > 0 and used >= max then
  local wait = redis.call('PTTL', KEYS[6])
  if wait < 0 then wait = 0 end
  return redis.error_reply('EMQRATE ' .. wait .. ' rate limited')
end
if max > 0 and max - used < want then want = max - used end
local ids, from_prio = {}, 0
if want > 0 then
  ids = redis.call('ZRANGE', KEYS[8], 0, want - 1)
  from_prio = #ids
  if from_prio < want then
    for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, want - from_prio - 1)) do
      ids[#ids + 1] = id
    end
  end
end
if #ids == 0 then
  redis.call('DEL', KEYS[7])
  return {}
end
local max_attempts = tonumber(ARGV[4])
local rows, leasing, capping = {}, false, false
for i, id in ipairs(ids) do
  rows[i] = redis.call('HMGET', ARGV[1] .. 'job:' .. id, 'payload', 'attempts', 'state', 'priority')
  if i <= from_prio and (rows[i][3] ~= 'pending' or not rows[i][4]) then
    rows[i][1] = false
  end
  if rows[i][1] then
    if max_attempts > 0 and tonumber(rows[i][2]) >= max_attempts then
      capping = true
    else
      leasing = true
    end
  end
end
local bad = leasing and wrongtype(KEYS[2], 'zset')
if capping then
  bad = bad or wrongtype(KEYS[4], 'zset') or wrongtype(KEYS[5], 'hash')
end
if bad then return redis.error_reply(bad) end
if from_prio > 0 then
  redis.call('ZREMRANGEBYRANK', KEYS[8], 0, from_prio - 1)
end
if #ids > from_prio then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, #ids - from_prio - 1)
end
local deadline = now + tonumber(ARGV[2])
local out = {}
local leases = {}
for i, id in ipairs(ids) do
  local row = ARGV[1] .. 'job:' .. id
  local held = rows[i]
  -- A member without a row (or a prio member not waiting) is debris;
  -- dropping it is all claim can do.
  if held[1] then
    if max_attempts > 0 and tonumber(held[2]) >= max_attempts then
      redis.call('HSET', row, 'state', 'dead', 'last_error', 'max attempts exceeded')
      redis.call('ZADD', KEYS[4], 0, id)
      redis.call('HINCRBY', KEYS[5], 'count', 1)
    else
      local token = redis.call('HINCRBY', row, 'attempts', 1)
      redis.call('HSET', row, 'state', 'active')
      leases[#leases + 1] = deadline
      leases[#leases + 1] = id
      out[#out + 1] = id
      out[#out + 1] = held[1]
      out[#out + 1] = token
    end
  end
end
if #leases > 0 then
  redis.call('ZADD', KEYS[2], unpack(leases))
  if max > 0 then
    redis.call('INCRBY', KEYS[6], #leases / 2)
    if redis.call('PTTL', KEYS[6]) < 0 then
      redis.call('PEXPIRE', KEYS[6], tonumber(limits[3] or '1000') or 1000)
    end
  end
end
if redis.call('ZCARD', KEYS[1]) == 0 and redis.call('ZCARD', KEYS[8]) == 0 then
  redis.call('DEL', KEYS[7])
elseif redis.call('EXISTS', KEYS[7]) == 0 then
  redis.call('LPUSH', KEYS[7], '1')
end
return out
