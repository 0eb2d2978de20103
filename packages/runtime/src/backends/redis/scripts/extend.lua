-- extend: the worker's heartbeat. Refreshes its heartbeat key and pushes the lease of each job it still owns;
-- a job whose lease was taken over by another worker is left alone.
-- ARGV 6 worker id, 7 lease (ms), 8 worker heartbeat TTL (ms), 9.. job ids. Returns how many leases moved.
local worker, lease_ms = ARGV[6], tonumber(ARGV[7])
heartbeat(worker, tonumber(ARGV[8]))
local deadline = NOW + lease_ms
local n = 0
for i = 9, #ARGV do
  local jkey = job_key(ARGV[i])
  if owned_by(jkey, worker) then
    redis.call('ZADD', RUNNING, deadline, ARGV[i])
    redis.call('HSET', jkey, 'lease', deadline)
    n = n + 1
  end
end
return n
