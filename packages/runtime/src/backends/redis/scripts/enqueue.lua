-- enqueue: stores new jobs; an id that already exists (waiting, running, dead or recently completed) is left
-- alone, which is how events and schedules stay idempotent.
-- ARGV 6..: groups of six per job: id, json, attempts, errors (JSON array text), available_at (ms), max_attempts
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
local i = 6
while i + 5 <= #ARGV do
  local id = ARGV[i]
  local jkey = job_key(id)
  if redis.call('EXISTS', jkey) == 0 then
    local json = ARGV[i + 1]
    local priority = priority_in(json)
    local avail = tonumber(ARGV[i + 4])
    if priority ~= DEFAULT_PRIORITY then
      store_job(jkey, json, ARGV[i + 2], ARGV[i + 3], ARGV[i + 5], { 'state', 'ready', 'available_at', avail, 'priority', priority })
    else
      store_job(jkey, json, ARGV[i + 2], ARGV[i + 3], ARGV[i + 5], { 'state', 'ready', 'available_at', avail })
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
  i = i + 6
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
