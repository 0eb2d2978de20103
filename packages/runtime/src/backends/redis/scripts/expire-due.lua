-- expire-due: the deadline sweep (docs/flow-control.md#deadlines). The deadlines ZSET holds the jobs enqueued with a
-- deadline, scored by it; those whose deadline has passed leave it, and each that is still ready and never ran (no
-- attempt spent, not a flow's step) ends `expired`: off its ready list, the scheduled set and its task's parked
-- list, the error recorded, kept as a cancelled job is (see expire.lua). The others (started, finished) just leave.
-- ARGV 6 deadlines ZSET, 7 how many at most, 8 error JSON, 9 keep (ms), 10 cancelled ZSET, 11 parked LIST prefix,
-- 12 limit key prefix (a keyed job's own list).
-- Returns how many expired.
local due = redis.call('ZRANGEBYSCORE', ARGV[6], '-inf', NOW, 'LIMIT', 0, tonumber(ARGV[7]))
local keep, expired = tonumber(ARGV[9]), 0
local from_lists = {}
for _, id in ipairs(due) do
  redis.call('ZREM', ARGV[6], id)
  local jkey = job_key(id)
  local f = redis.call('HMGET', jkey, 'state', 'attempts', 'json', 'flow')
  if f[1] == 'ready' and (tonumber(f[2]) or 0) == 0 and not f[4] then
    local list = ready_key(priority_of(jkey))
    from_lists[list] = from_lists[list] or {}
    from_lists[list][id] = true
    redis.call('ZREM', SCHEDULED, id)
    local task = task_of(f[3])
    if task then
      redis.call('LREM', ARGV[11] .. task, 0, id)
    end
    take_off_key_list(ARGV[12], f[3], id)
    redis.call('HSET', jkey, 'state', 'expired', 'cancelled_at', NOW)
    append_error(jkey, ARGV[8])
    if keep > 0 then
      redis.call('PEXPIRE', jkey, keep)
    end
    redis.call('ZADD', ARGV[10], NOW, id)
    expired = expired + 1
  end
end
for list, ids in pairs(from_lists) do
  remove_from_list(list, ids)
end
return expired
