-- delete-job: a waiting job (ready, scheduled or parked) is taken off every list a claim reads and its hash is
-- deleted; enqueueing its id again makes a new job. Any other state is left as it is (dead letters go through
-- discard-dead.lua). Rare, so scanning the ready list for the id is acceptable.
-- ARGV 6 job id, 7 parked LIST prefix, 8 limit key prefix (a keyed job's own list).
-- Returns { deleted (1 or 0), state after the call ('' when there is no such job, or it was deleted) }.
local id, parked_prefix = ARGV[6], ARGV[7]
local jkey = job_key(id)
local f = redis.call('HMGET', jkey, 'state', 'json')
local state = f[1]
if not state then
  return { 0, '' }
end
if state ~= 'ready' then
  return { 0, state }
end
redis.call('LREM', ready_key(priority_of(jkey)), 0, id)
redis.call('ZREM', SCHEDULED, id)
local task = task_of(f[2])
if task then
  redis.call('LREM', parked_prefix .. task, 0, id)
end
take_off_key_list(ARGV[8], f[2], id)
redis.call('DEL', jkey)
return { 1, '' }
