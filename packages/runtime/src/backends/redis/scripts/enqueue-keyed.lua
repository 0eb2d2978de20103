-- enqueue-keyed: enqueue.lua for a batch with jobs of a task with fairness (docs/flow-control.md#fair-share-across-keys):
-- such a job, when due, goes on its key's own list (<limit prefix>kparked:<task>:<key>, oldest on the right) instead
-- of the ready list, and its key joins the task's keys in turn order (kturnq:<task>, lib.lua queue_key_turn), so the
-- claim serves the first keys in turn without reading one key's backlog to reach another's. A job due later goes to the scheduled set as
-- any other; the claim moves it to its key's list when it comes due. Plain enqueues never run this script.
-- ARGV 6 limit key prefix; 7..: groups of eight per job: id, json, attempts, errors (JSON array text),
--      available_at (ms), max_attempts, task, key ('' with a task without fairness: the ready list, as enqueue.lua)
-- Returns the ids written now.
promote_due(1000)
local prefix = ARGV[6]
local inserted = {}
local queued = {}
local i = 7
while i + 7 <= #ARGV do
  local id = ARGV[i]
  local jkey = job_key(id)
  if redis.call('EXISTS', jkey) == 0 then
    local priority = priority_in(ARGV[i + 1])
    local avail = tonumber(ARGV[i + 4])
    store_job(jkey, ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 5], {})
    remember_priority(jkey, priority)
    local task, key = ARGV[i + 6], ARGV[i + 7]
    if task ~= '' and avail <= NOW then
      redis.call('HSET', jkey, 'state', 'ready', 'available_at', avail)
      redis.call('LPUSH', prefix .. 'kparked:' .. task .. ':' .. key, id)
      if not queued[task .. '\0' .. key] then
        queue_key_turn(prefix, task, key)
        queued[task .. '\0' .. key] = true
      end
    else
      make_ready(jkey, id, avail, false, priority)
    end
    inserted[#inserted + 1] = id
  end
  i = i + 8
end
return inserted
