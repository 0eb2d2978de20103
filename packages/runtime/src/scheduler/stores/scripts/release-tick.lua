-- Undoes a claim whose enqueue failed, so a later pass takes the tick again. It restores the previous
-- last tick only while the released tick is still the last: once a later tick was claimed, nothing moves.
-- KEYS[1] last HASH, KEYS[2] claims ZSET
-- ARGV[1] schedule name, ARGV[2] released tick (epoch ms), ARGV[3] previous last tick ("" = none)
-- returns 1 when the last tick was restored, 0 otherwise
redis.call('ZREM', KEYS[2], ARGV[2] .. ':' .. ARGV[1])
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then
  return 0
end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
end
return 1
