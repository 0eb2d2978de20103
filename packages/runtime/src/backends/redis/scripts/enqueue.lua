-- enqueue: stores new jobs; an id that already exists (waiting, running, dead or recently completed) is left
-- alone, which is how events and schedules stay idempotent.
-- ARGV 6..: groups of six per job: id, json, attempts, errors (JSON array text), available_at (ms), max_attempts
-- Returns the ids written now.
-- Due jobs are promoted first so a job that came due earlier is ahead of the ones written now.
promote_due(1000)
local inserted = {}
local i = 6
while i + 5 <= #ARGV do
  local id = ARGV[i]
  local jkey = job_key(id)
  if redis.call('EXISTS', jkey) == 0 then
    local priority = priority_in(ARGV[i + 1])
    redis.call('HSET', jkey, 'json', ARGV[i + 1], 'attempts', ARGV[i + 2], 'errors', ARGV[i + 3], 'max_attempts', ARGV[i + 5])
    remember_priority(jkey, priority)
    make_ready(jkey, id, tonumber(ARGV[i + 4]), false, priority)
    inserted[#inserted + 1] = id
  end
  i = i + 6
end
return inserted
