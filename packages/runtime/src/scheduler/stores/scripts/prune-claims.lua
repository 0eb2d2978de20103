-- Deletes claims made before a cutoff, oldest first and at most a batch per call, except each schedule's
-- last claim. The last tick itself lives in the HASH and is never pruned.
-- KEYS[1] last HASH, KEYS[2] claims ZSET
-- ARGV[1] cutoff (epoch ms, exclusive), ARGV[2] batch size
-- returns the number of claims removed
local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local removed = 0
for _, member in ipairs(old) do
  local sep = string.find(member, ':', 1, true)
  local tick = string.sub(member, 1, sep - 1)
  local name = string.sub(member, sep + 1)
  if redis.call('HGET', KEYS[1], name) ~= tick then
    redis.call('ZREM', KEYS[2], member)
    removed = removed + 1
  end
end
return removed
