-- update_progress (echomq:2.1.0): the holder records how far its job got, in
-- the row field `progress` (the reference's field; the last write wins). Only
-- the holder may: the token must match and the job must be active (the
-- reference writes in any state, so a stale holder could overwrite it).
-- KEYS[1] row
-- ARGV[1] token  ARGV[2] progress (JSON text, checked by the client)
-- Answer: 'ok'; EMQSTALE when gone, mismatched or not active.
local held = redis.call('HMGET', KEYS[1], 'attempts', 'state')
if not held[1] then
  return redis.error_reply('EMQSTALE job gone')
end
if held[1] ~= ARGV[1] then return redis.error_reply('EMQSTALE progress token mismatch') end
if held[2] ~= 'active' then
  return redis.error_reply('EMQSTALE progress job not held (' .. tostring(held[2]) .. ')')
end
redis.call('HSET', KEYS[1], 'progress', ARGV[2])
return 'ok'
