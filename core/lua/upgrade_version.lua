-- upgrade_version (echomq:2.1.0): move the deployment's wire version forward,
-- an explicit operator act (PROTOCOL.md §8). Compare-and-set: only when the
-- record holds the expected older version; never backward (the caller checks
-- the order). The bundle record gains the new version's script fields
-- (HSETNX, as a connect would), and its `bundle` field moves to the new
-- bundle's hash only if it held the old bundle's (another runtime's is kept).
-- KEYS[1] {emq}:version  KEYS[2] {emq}:bundle
-- ARGV[1] expected version  ARGV[2] new version  ARGV[3] old bundle sha
-- ARGV[4] new bundle sha  ARGV[5], ARGV[6], ... script name, sha pairs
-- Answer: {1, new version} | {0, the value found}
-- Nothing half-written: the bundle record is checked by the type guard before
-- the version moves, so a bundle key of another type answers WRONGTYPE and
-- the version stays (it moved, and then the record failed).
local function wrongtype(key, want)
  local t = redis.call('TYPE', key).ok
  if t ~= 'none' and t ~= want then
    return 'WRONGTYPE ' .. key .. ' holds a ' .. t .. ', not a ' .. want
  end
  return nil, t
end
local found = redis.call('GET', KEYS[1])
if found ~= ARGV[1] then
  return {0, found or ''}
end
local bad = wrongtype(KEYS[2], 'hash')
if bad then return redis.error_reply(bad) end
redis.call('SET', KEYS[1], ARGV[2])
for i = 5, #ARGV, 2 do
  redis.call('HSETNX', KEYS[2], ARGV[i], ARGV[i + 1])
end
if redis.call('HGET', KEYS[2], 'bundle') == ARGV[3] then
  redis.call('HSET', KEYS[2], 'bundle', ARGV[4])
end
return {1, ARGV[2]}
