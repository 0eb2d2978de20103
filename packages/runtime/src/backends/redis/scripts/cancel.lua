-- cancel: a ready, scheduled, parked or running job, or a flow step waiting for its parents, becomes `cancelled`
-- and is taken off every list a claim reads, so it never runs (again). A running job keeps its `owner` and its
-- place in that worker's processing list: the worker's next heartbeat (extend.lua) finds it there, tells the
-- worker, and drops it. Its lease is gone, so no reaping revives it, and every outcome script refuses it (owned_by
-- needs `running`). The hash is kept for `keep` ms (0: until the pruner deletes it), then expires on its own; the
-- cancelled ZSET orders it for the pruner.
-- Any other state is left as it is.
-- ARGV 6 job id, 7 keep (ms), 8 parked LIST prefix, 9 cancelled ZSET, 10 limit key prefix (a keyed job's own list).
-- Returns { cancelled (1 or 0), state after the call ('' when there is no such job) }.
local id, keep, parked_prefix = ARGV[6], tonumber(ARGV[7]), ARGV[8]
local jkey = job_key(id)
local f = redis.call('HMGET', jkey, 'state', 'json')
local state = f[1]
if not state then
  return { 0, '' }
end
if state ~= 'ready' and state ~= 'running' and state ~= 'waiting' then
  return { 0, state }
end
if state == 'ready' then
  -- Rare, so a scan of the ready list is acceptable; the claim would otherwise only drop the reference.
  redis.call('LREM', ready_key(priority_of(jkey)), 0, id)
  local task = task_of(f[2])
  if task then
    redis.call('LREM', parked_prefix .. task, 0, id)
  end
  take_off_key_list(ARGV[10], f[2], id)
end
cancel_job(jkey, id, state, keep, ARGV[9])
return { 1, 'cancelled' }
