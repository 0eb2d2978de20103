-- snooze: the handler returned snooze(ms). Like release.lua for one job: claimable again at its time (the
-- scheduled set when that is in the future) with its attempt given back, and its `snoozes` field raised by one —
-- unless it has snoozed `max` times already: then nothing changes and the worker dead-letters it (kill.lua).
-- ARGV 6 worker id, 7 job id, 8 available at (ms), 9 max snoozes, 10 the attempt's record (JSON, '' for none).
-- Returns 1 when snoozed, 0 when the job is not this worker's or has reached the limit.
local worker, id, max = ARGV[6], ARGV[7], tonumber(ARGV[9])
local jkey = job_key(id)
if not owned_by(jkey, worker) then
  return 0
end
local f = redis.call('HMGET', jkey, 'snoozes', 'attempts')
local snoozes = tonumber(f[1]) or 0
if snoozes >= max then
  return 0
end
detach(jkey, id)
append_run(jkey, ARGV[10])
redis.call('HSET', jkey, 'snoozes', snoozes + 1, 'attempts', math.max(0, (tonumber(f[2]) or 0) - 1))
make_ready(jkey, id, tonumber(ARGV[8]), false)
return 1
