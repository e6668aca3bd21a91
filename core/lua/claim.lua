-- claim: pop up to N of the oldest pending ids, mint each one's fencing token
-- (HINCRBY attempts) and lease them until server-now + lease.
-- KEYS[1] pending  KEYS[2] active  KEYS[3] meta
-- ARGV[1] queue base 'emq:{q}:'  ARGV[2] lease ms  ARGV[3] max jobs
-- Answer: flat array id, payload, token, id, payload, token, ...
if redis.call('HEXISTS', KEYS[3], 'paused') == 1 then
  return {}
end
local popped = redis.call('ZPOPMIN', KEYS[1], tonumber(ARGV[3]))
if #popped == 0 then
  return {}
end
local t = redis.call('TIME')
local deadline = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[2])
local out = {}
local leases = {}
for i = 1, #popped, 2 do
  local id = popped[i]
  local row = ARGV[1] .. 'job:' .. id
  local payload = redis.call('HGET', row, 'payload')
  -- A pending member without a row is debris; dropping it is all claim can do.
  if payload then
    local token = redis.call('HINCRBY', row, 'attempts', 1)
    redis.call('HSET', row, 'state', 'active')
    leases[#leases + 1] = deadline
    leases[#leases + 1] = id
    out[#out + 1] = id
    out[#out + 1] = payload
    out[#out + 1] = token
  end
end
if #leases > 0 then
  redis.call('ZADD', KEYS[2], unpack(leases))
end
return out
