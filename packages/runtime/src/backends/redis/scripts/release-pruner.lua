-- release-pruner: gives the pruner's lease back if ARGV 7 still holds it, so the next claim need not wait for it
-- to expire. ARGV 6 lease key, 7 owner. Returns 1 when released.
if redis.call('GET', ARGV[6]) == ARGV[7] then
  redis.call('DEL', ARGV[6])
  return 1
end
return 0
