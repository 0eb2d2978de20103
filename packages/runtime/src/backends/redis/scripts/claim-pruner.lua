-- claim-pruner: takes the pruner's lease of this queue for ARGV 8 ms unless another owner holds it (one pruner at a
-- time, docs/queues.md#retention). The key expires with the lease, so a vanished owner holds it no longer.
-- ARGV 6 lease key, 7 owner, 8 duration (ms)
-- Returns 1 when ARGV 7 holds the lease now, else 0.
local holder = redis.call('GET', ARGV[6])
if holder and holder ~= ARGV[7] then
  return 0
end
redis.call('SET', ARGV[6], ARGV[7], 'PX', tonumber(ARGV[8]))
return 1
