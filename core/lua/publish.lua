-- publish: send a batch of queue events on one channel, and only when
-- someone is subscribed to it (nobody listening means nothing to deliver:
-- pub/sub is at-most-once). One call per batch instead of one PUBLISH per
-- event keeps the server's cost per event low. Reads and writes no key.
-- KEYS[1] the queue's meta key (routing only: it is neither read nor written)
-- ARGV[1] channel 'emq:{q}:events'  ARGV[2], ARGV[3], ... the messages
-- Answer: how many messages were published (0 when nobody listens).
if redis.call('PUBSUB', 'NUMSUB', ARGV[1])[2] == 0 then
  return 0
end
for i = 2, #ARGV do
  redis.call('PUBLISH', ARGV[1], ARGV[i])
end
return #ARGV - 1
