-- cancel-flow: cancels every step of a flow not finished yet, each as cancel.lua cancels a job: waiting and ready
-- steps never run, a running one's worker learns it at its next heartbeat (extend.lua). The flow is marked
-- cancelled and finished; its keys expire with its cancelled steps' hashes.
-- ARGV 6 flow id, 7 keep (ms), 8 parked LIST prefix, 9 cancelled ZSET.
-- Returns false when there is no such flow, else the ids cancelled now.
local flow_id, keep, parked_prefix = ARGV[6], tonumber(ARGV[7]), ARGV[8]
local fkey = FLOW_PREFIX .. flow_id
if redis.call('EXISTS', fkey) == 0 then
  return false
end
local cancelled = {}
-- Ids to take off each ready or parked list: taken off in one pass per list below, not one LREM per step.
local off = {}
for _, id in ipairs(redis.call('LRANGE', fkey .. ':steps', 0, -1)) do
  local jkey = job_key(id)
  local f = redis.call('HMGET', jkey, 'state', 'json')
  if f[1] == 'waiting' or f[1] == 'ready' or f[1] == 'running' then
    if f[1] == 'ready' then
      for _, list in ipairs({ ready_key(priority_of(jkey)), parked_prefix .. (task_of(f[2]) or '') }) do
        off[list] = off[list] or {}
        off[list][id] = true
      end
    end
    cancel_job(jkey, id, f[1], keep, ARGV[9])
    cancelled[#cancelled + 1] = id
  end
end
for list, ids in pairs(off) do
  remove_from_list(list, ids)
end
redis.call('HSET', fkey, 'cancelled', '1')
if redis.call('HEXISTS', fkey, 'finished_at') == 0 then
  redis.call('HSET', fkey, 'finished_at', NOW)
end
if keep > 0 then
  redis.call('PEXPIRE', fkey, keep)
  redis.call('PEXPIRE', fkey .. ':steps', keep)
end
return cancelled
