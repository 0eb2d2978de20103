-- progress: tools.progress of a running job (docs/jobs.md#progress), stored only while this worker still runs it, so
-- a write arriving after the attempt's outcome changes nothing. At most about once a second per job, and only for
-- handlers that report progress. ARGV 6 worker id, 7 job id, 8 progress JSON. Returns 1 when stored, else 0.
local jkey = job_key(ARGV[7])
if not owned_by(jkey, ARGV[6]) then
  return 0
end
redis.call('HSET', jkey, 'progress', ARGV[8])
return 1
