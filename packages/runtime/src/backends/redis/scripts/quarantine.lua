-- quarantine: a claimed job whose stored JSON could not be read back as a job is set aside as a dead letter
-- (see quarantine in lib.lua). ARGV 6 worker id, 7 job id, 8 message. Returns 1, or 0 if not this worker's.
local worker, id = ARGV[6], ARGV[7]
local jkey = job_key(id)
if not owned_by(jkey, worker) then
  return 0
end
detach(jkey, id)
quarantine(id, redis.call('HGET', jkey, 'json'), ARGV[8])
return 1
