-- enqueue: stores new jobs; an id that already exists (waiting, running, dead or recently completed) is left
-- alone, which is how events and schedules stay idempotent.
-- ARGV 6: '' when the jobs follow in groups of six: id, json, attempts, errors (JSON array text), available_at (ms),
--         max_attempts; else the max_attempts of every job, which follow in groups of three: id, json, available_at
--         (new jobs: no attempt made, no error; half the arguments to encode, send and read of a bulk enqueue)
-- Returns the ids written now.
-- Due jobs are promoted first so a job that came due earlier is ahead of the ones written now.
-- Per job one EXISTS and one HSET (lib.lua's store_job: the job, its state and due time together, as make_ready
-- would write them); the ready ids go onto their lists and the scheduled ones into the set in one command per list
-- at the end, in the order given, so a batch reads as if each job had been pushed alone (LPUSH a b c leaves c b a,
-- as three would).
promote_due(1000)
local inserted = {}
local ready = {}
local scheduled = {}
local shared_max = ARGV[6]
local compact = shared_max ~= ''
local stride = compact and 3 or 6
local i = 7
while i + stride - 1 <= #ARGV do
  local id = ARGV[i]
  local jkey = job_key(id)
  if redis.call('EXISTS', jkey) == 0 then
    local json = ARGV[i + 1]
    local priority = priority_in(json)
    local avail, attempts, errors, max_attempts
    if compact then
      avail, attempts, errors, max_attempts = tonumber(ARGV[i + 2]), '0', '[]', shared_max
    else
      avail, attempts, errors, max_attempts = tonumber(ARGV[i + 4]), ARGV[i + 2], ARGV[i + 3], ARGV[i + 5]
    end
    if priority ~= DEFAULT_PRIORITY then
      store_job(jkey, json, attempts, errors, max_attempts, { 'state', 'ready', 'available_at', avail, 'priority', priority })
    else
      store_job(jkey, json, attempts, errors, max_attempts, { 'state', 'ready', 'available_at', avail })
    end
    if avail <= NOW then
      local list = ready[priority]
      if not list then
        list = {}
        ready[priority] = list
      end
      list[#list + 1] = id
    else
      scheduled[#scheduled + 1] = avail
      scheduled[#scheduled + 1] = id
    end
    inserted[#inserted + 1] = id
  end
  i = i + stride
end
for priority, ids in pairs(ready) do
  local list = ready_key(priority)
  for j = 1, #ids, 1000 do
    redis.call('LPUSH', list, unpack(ids, j, math.min(j + 999, #ids)))
  end
  -- Idle workers block on READY alone (push_ready in lib.lua): another priority's list is announced instead.
  if list ~= READY and not announced then
    redis.call('PUBLISH', WAKE, NOW)
    announced = true
  end
end
for j = 1, #scheduled, 1000 do
  redis.call('ZADD', SCHEDULED, unpack(scheduled, j, math.min(j + 999, #scheduled)))
end
return inserted
