-- expire: a job claimed after its deadline (docs/flow-control.md#deadlines) ends `expired` instead of running: out
-- of its worker's hands, its attempt given back (it never started), the error recorded. Kept as a cancelled job
-- is: its hash expires after `keep` ms (0: the pruner deletes it), ordered for the pruner in the cancelled ZSET.
-- ARGV 6 worker id, 7 job id, 8 error JSON, 9 keep (ms), 10 cancelled ZSET.
-- Returns 1 when expired, 0 when the job was not this worker's.
local worker, id, keep = ARGV[6], ARGV[7], tonumber(ARGV[9])
local jkey = job_key(id)
if not owned_by(jkey, worker) then
  return 0
end
detach(jkey, id)
local attempts = (tonumber(redis.call('HGET', jkey, 'attempts')) or 1) - 1
if attempts < 0 then
  attempts = 0
end
redis.call('HSET', jkey, 'attempts', attempts, 'state', 'expired', 'cancelled_at', NOW)
append_error(jkey, ARGV[8])
if keep > 0 then
  redis.call('PEXPIRE', jkey, keep)
end
redis.call('ZADD', ARGV[10], NOW, id)
return 1
