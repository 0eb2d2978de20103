-- debounce (docs/flow-control.md#debounce): one write of a debounced job, done only if what its caller read (the key's
-- job, and that job's JSON) is still so; else 0, and the caller reads again. Two modes:
--   fold:   the key's job still waits (ready, never started) with the JSON read: it takes the new JSON (the latest
--           payload) and its new start, off its ready or parked list first when it was already due
--   insert: the key's job read (or none) no longer waits: the new job is stored as enqueue.lua stores one and becomes
--           the key's job
-- ARGV 6 mode, 7 the key's STRING (job id), 8 the key's job id as read ('' none), 9 parked LIST prefix;
--   fold:   10 the JSON read, 11 the new JSON, 12 the new start (ms)
--   insert: 10 id, 11 json, 12 attempts, 13 errors (JSON array text), 14 available_at (ms), 15 max_attempts
-- Returns 1 when written, 2 when the new job's id exists already (left alone), 0 when the read is stale.
local mode, reg, expected = ARGV[6], ARGV[7], ARGV[8]
if (redis.call('GET', reg) or '') ~= expected then
  return 0
end
if mode == 'fold' then
  local jkey = job_key(expected)
  local f = redis.call('HMGET', jkey, 'state', 'attempts', 'json')
  if f[1] ~= 'ready' or (tonumber(f[2]) or 0) ~= 0 or f[3] ~= ARGV[10] then
    return 0
  end
  redis.call('HSET', jkey, 'json', ARGV[11])
  if not redis.call('ZSCORE', SCHEDULED, expected) then
    -- Due already (or set aside for its paused task): off those lists, then ready again at its new start.
    redis.call('LREM', ready_key(priority_of(jkey)), 0, expected)
    local task = task_of(ARGV[11])
    if task then
      redis.call('LREM', ARGV[9] .. task, 0, expected)
    end
  end
  make_ready(jkey, expected, tonumber(ARGV[12]), false)
  return 1
end
if expected ~= '' then
  local f = redis.call('HMGET', job_key(expected), 'state', 'attempts')
  if f[1] == 'ready' and (tonumber(f[2]) or 0) == 0 then
    return 0
  end
end
local id = ARGV[10]
local jkey = job_key(id)
if redis.call('EXISTS', jkey) == 1 then
  return 2
end
local priority = priority_in(ARGV[11])
redis.call('HSET', jkey, 'json', ARGV[11], 'attempts', ARGV[12], 'errors', ARGV[13], 'max_attempts', ARGV[15])
remember_priority(jkey, priority)
make_ready(jkey, id, tonumber(ARGV[14]), false, priority)
redis.call('SET', reg, id)
return 1
