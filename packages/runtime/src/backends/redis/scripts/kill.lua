-- kill: records the final error and moves the job to dead letters (scored by time of death).
-- ARGV 6 worker id, 7 job id, 8 error JSON, 9 the attempt's record (JSON, '' for none). Returns 1 when recorded, 0 when the job was not this worker's.
local worker, id = ARGV[6], ARGV[7]
local jkey = job_key(id)
if not owned_by(jkey, worker) then
  return 0
end
detach(jkey, id)
append_error(jkey, ARGV[8])
append_run(jkey, ARGV[9])
make_dead(jkey, id)
return 1
