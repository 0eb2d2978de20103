-- prune: deletes one batch of finished jobs, oldest first (docs/queues.md#retention): completed ones, dead
-- letters or cancelled ones, each ordered by its ZSET's score (when it finished). Bounded by ARGV 9.
-- A cancelled job its worker has not yet heard of (it still has an owner, extend.lua drops it) keeps its hash until
-- that hash expires, at least an hour, so the worker's next heartbeat still finds it; only its entry goes.
-- A flow's own keys go with the last of its steps' hashes (forget_job in lib.lua). A completed step of a flow still
-- running is kept, the steps after it read its result (docs/flows.md#states): the script reads past such steps, up
-- to ten times the batch, and leaves them for a later run once their flow has finished.
-- ARGV 6 ZSET of the state, 7 mode ('before' | 'keep'), 8 cutoff (ms) or how many of the newest to keep,
--      9 batch size
-- Returns how many jobs were pruned.
local set, mode, value, limit = ARGV[6], ARGV[7], tonumber(ARGV[8]), tonumber(ARGV[9])
local ids
local window = limit * 10
if mode == 'before' then
  ids = redis.call('ZRANGEBYSCORE', set, '-inf', '(' .. ARGV[8], 'LIMIT', 0, window)
else
  local excess = redis.call('ZCARD', set) - value
  if excess <= 0 then
    return 0
  end
  ids = redis.call('ZRANGE', set, 0, math.min(excess, window) - 1)
end
local pruned = 0
for _, id in ipairs(ids) do
  if pruned >= limit then
    break
  end
  local jkey = job_key(id)
  local flow_id = redis.call('HGET', jkey, 'flow')
  local held = set ~= DEAD and flow_id and redis.call('EXISTS', FLOW_PREFIX .. flow_id) == 1 and redis.call('HEXISTS', FLOW_PREFIX .. flow_id, 'finished_at') == 0
  if not held then
    redis.call('ZREM', set, id)
    local f = redis.call('HMGET', jkey, 'state', 'owner')
    if f[1] == 'cancelled' and f[2] then
      if redis.call('PTTL', jkey) < 0 then
        redis.call('PEXPIRE', jkey, 3600000)
      end
      pruned = pruned + 1
    elseif f[1] == 'completed' or f[1] == 'dead' or f[1] == 'cancelled' then
      forget_job(jkey)
      pruned = pruned + 1
    end
  end
end
return pruned
