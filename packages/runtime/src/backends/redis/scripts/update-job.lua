-- update-job: changes a waiting job's JSON (payload, priority) and run time (jobs.update), only while it is still
-- ready (due, scheduled or parked) and its JSON is the one read: a job claimed, finished or dead meanwhile is left
-- as it is. A due or scheduled job whose priority or run time changes goes where enqueue.lua would put it (the back
-- of its priority's ready list, or the scheduled set at its new time, announced so idle workers re-plan); a parked
-- job keeps its place. Rare, so scanning the ready list for the id is acceptable.
-- ARGV 6 job id, 7 json read, 8 new json, 9 priority ('' keeps it), 10 available_at ms ('' keeps it).
-- Returns { changed (1; 0 when not ready; 2 when the JSON changed since it was read), state ('' when no such job) }.
local id = ARGV[6]
local jkey = job_key(id)
local f = redis.call('HMGET', jkey, 'state', 'json')
if not f[1] then
  return { 0, '' }
end
if f[1] ~= 'ready' then
  return { 0, f[1] }
end
if f[2] ~= ARGV[7] then
  return { 2, f[1] }
end
local old_priority = priority_of(jkey)
local priority = tonumber(ARGV[9]) or old_priority
local avail = tonumber(ARGV[10])
redis.call('HSET', jkey, 'json', ARGV[8])
if priority ~= old_priority then
  if priority == DEFAULT_PRIORITY then
    redis.call('HDEL', jkey, 'priority')
  else
    redis.call('HSET', jkey, 'priority', priority)
  end
end
if priority == old_priority and not avail then
  return { 1, 'ready' }
end
local scheduled = redis.call('ZREM', SCHEDULED, id) == 1
local listed = (not scheduled) and redis.call('LREM', ready_key(old_priority), 0, id) > 0
if scheduled or listed then
  local at = avail or tonumber(redis.call('HGET', jkey, 'available_at')) or NOW
  make_ready(jkey, id, at, false, priority)
  if at > NOW then
    redis.call('PUBLISH', WAKE, at)
  end
elseif avail then
  redis.call('HSET', jkey, 'available_at', avail)
end
return { 1, 'ready' }
