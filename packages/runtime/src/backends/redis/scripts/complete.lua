-- complete: the handler returned. Only the current owner may settle a job (a worker whose lease was taken
-- over must not overwrite the new owner's outcome). The job stays as `completed` for the retention period, so
-- an enqueue of the same id stays a no-op and getJob can still show it; older completed jobs are pruned here.
-- A retention of 0 ([plugin.queue] keep_completed = false) forgets the job at once.
-- ARGV 6 worker id, 7 job id, 8 retention (ms). Returns 1 when settled, 0 when the job was not this worker's.
local worker, id, retention = ARGV[6], ARGV[7], tonumber(ARGV[8])
local jkey = job_key(id)
if not owned_by(jkey, worker) then
  return 0
end
detach(jkey, id)
if retention <= 0 then
  redis.call('DEL', jkey)
  return 1
end
redis.call('HSET', jkey, 'state', 'completed', 'done_at', NOW)
redis.call('ZADD', COMPLETED, NOW, id)
for _, old in ipairs(redis.call('ZRANGEBYSCORE', COMPLETED, '-inf', NOW - retention, 'LIMIT', 0, 100)) do
  redis.call('DEL', job_key(old))
  redis.call('ZREM', COMPLETED, old)
end
return 1
