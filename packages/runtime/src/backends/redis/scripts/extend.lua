-- extend: the worker's heartbeat. Refreshes its heartbeat key and pushes the lease of each job it still owns;
-- a job whose lease was taken over by another worker is left alone. A job cancelled while this worker ran it
-- (cancel.lua keeps its owner) is reported, and dropped from the worker's processing list.
-- ARGV 6 worker id, 7 lease (ms), 8 worker heartbeat TTL (ms), 9.. job ids.
-- Returns the ids of the cancelled ones.
local worker, lease_ms = ARGV[6], tonumber(ARGV[7])
heartbeat(worker, tonumber(ARGV[8]))
local deadline = NOW + lease_ms
local cancelled = {}
for i = 9, #ARGV do
  local id = ARGV[i]
  local jkey = job_key(id)
  local f = redis.call('HMGET', jkey, 'state', 'owner')
  if f[2] == worker then
    if f[1] == 'running' then
      redis.call('ZADD', RUNNING, deadline, id)
      redis.call('HSET', jkey, 'lease', deadline)
    elseif f[1] == 'cancelled' then
      redis.call('LREM', PROCESSING_PREFIX .. worker, -1, id)
      redis.call('HDEL', jkey, 'owner')
      cancelled[#cancelled + 1] = id
    end
  end
end
return cancelled
