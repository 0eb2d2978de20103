-- Claims a tick of a schedule unless a claim at or after it exists: the stored last tick only ever
-- moves forward here, whatever the replicas' clocks say.
-- KEYS[1] last HASH, KEYS[2] claims ZSET
-- ARGV[1] schedule name, ARGV[2] tick (epoch ms), ARGV[3] now (epoch ms)
-- returns {1, previous last tick or ""} when this call won, {0, current last tick} otherwise
local last = redis.call('HGET', KEYS[1], ARGV[1])
if last and tonumber(last) >= tonumber(ARGV[2]) then
  return {0, last}
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2] .. ':' .. ARGV[1])
return {1, last or ''}
