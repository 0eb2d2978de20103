-- run-now: a scheduled job (delayed, backing off, snoozed) becomes due now: out of the scheduled set and onto the
-- ready list, as a job enqueued now. A job already due (on the ready list or parked while its task is paused)
-- keeps its place. Any other state is left as it is.
-- ARGV 6 job id.
-- Returns { changed (1 or 0), state after the call ('' when there is no such job) }.
local id = ARGV[6]
local jkey = job_key(id)
local state = redis.call('HGET', jkey, 'state')
if not state then
  return { 0, '' }
end
if state ~= 'ready' then
  return { 0, state }
end
if redis.call('ZREM', SCHEDULED, id) == 1 then
  make_ready(jkey, id, NOW, false)
end
return { 1, 'ready' }
