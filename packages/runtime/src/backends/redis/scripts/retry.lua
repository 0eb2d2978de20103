-- retry: records the failed attempt and makes the job claimable again at its backoff time (the scheduled set
-- when that is in the future). ARGV 6 worker id, 7 job id, 8 error JSON, 9 available_at (ms), 10 the attempt's
-- record (JSON, '' for none; core/job-life.ts).
-- Returns 1 when recorded, 0 when the job was not this worker's.
local worker, id = ARGV[6], ARGV[7]
local jkey = job_key(id)
if not owned_by(jkey, worker) then
  return 0
end
detach(jkey, id)
append_error(jkey, ARGV[8])
append_run(jkey, ARGV[10])
make_ready(jkey, id, tonumber(ARGV[9]), false)
return 1
