-- claim: leases up to `limit` jobs to a worker and counts their attempt, in one step with the move into the
-- worker's processing list, so a job is never in a processing list without a lease or vice versa.
-- A paused task's job taken from the ready list is not claimed: it is parked on that task's parked list, its
-- attempts untouched, until resume.lua puts it back (docs/worker.md#pausing-a-task).
-- ARGV 6 worker id, 7 limit, 8 lease (ms), 9 worker heartbeat TTL (ms), 10 worker-lost error tail,
--      11 paused HASH, 12 parked LIST prefix,
--      13.. ids the caller already holds for this worker (delivered and not yet settled)
-- Returns { jobs, notes, processing }:
--   jobs: { id, json, attempts, errors, available_at } each
--   notes: { kind, id, detail } for ready-list entries set aside instead of delivered
--   processing: the worker's processing list afterwards (the caller forgets held ids no longer in it)
local worker, limit, lease_ms = ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8])
local ttl_ms, lost_tail = tonumber(ARGV[9]), ARGV[10]
local paused, parked_prefix = ARGV[11], ARGV[12]
local any_paused = redis.call('HLEN', paused) > 0
local processing = PROCESSING_PREFIX .. worker
heartbeat(worker, ttl_ms)
promote_due(1000)
reap_expired(lost_tail, 1000)

local jobs, notes = {}, {}

-- Counts a claimed job's attempt; false when its attempts field is not an integer (the count failed).
local function count_attempt(jkey)
  local counted = redis.pcall('HINCRBY', jkey, 'attempts', 1)
  return type(counted) ~= 'table' or not counted.err
end
local deadline = NOW + lease_ms
local function deliver(jkey, id)
  local f = redis.call('HMGET', jkey, 'json', 'attempts', 'errors', 'available_at')
  jobs[#jobs + 1] = { id, f[1], f[2], f[3], f[4] }
end

-- Jobs already leased to this worker that the caller never received: the reply of an earlier claim was lost
-- (connection dropped after Redis ran it). Hand them out again; their attempt was counted once and has not run.
local held = {}
for i = 13, #ARGV do
  held[ARGV[i]] = true
end
for _, id in ipairs(redis.call('LRANGE', processing, 0, -1)) do
  if not held[id] then
    local jkey = job_key(id)
    if not owned_by(jkey, worker) then
      redis.call('LREM', processing, 0, id)
    elseif #jobs < limit then
      redis.call('ZADD', RUNNING, deadline, id)
      redis.call('HSET', jkey, 'lease', deadline)
      deliver(jkey, id)
    end
  end
end

-- New work: priority 0's list first, each list oldest first. Garbage on a list is consumed too, so it cannot wake
-- waiters forever. An empty list costs one LMOVE answering nil.
local budget = limit * 4 + 16
local list_index = 1
while #jobs < limit and budget > 0 and list_index <= #READY_LISTS do
  budget = budget - 1
  local id = redis.call('LMOVE', READY_LISTS[list_index], processing, 'RIGHT', 'LEFT')
  if not id then
    list_index = list_index + 1
  else
    local jkey = job_key(id)
    local f = redis.pcall('HMGET', jkey, 'state', 'json')
    if f.err then
      -- The job's key holds another kind of value (a hand edit, another program): reading it fails, and it would
      -- fail this claim and every later one. A string's text is kept in the dead letter that replaces the key.
      local kind = redis.call('TYPE', jkey)['ok']
      local raw = kind == 'string' and redis.call('GET', jkey) or nil
      local problem = 'the key of this job held a ' .. kind .. ', not a job hash; it was set aside instead of run'
      redis.call('DEL', jkey)
      redis.call('LREM', processing, 1, id)
      quarantine(id, raw, problem)
      notes[#notes + 1] = { 'set-aside', id, problem }
    elseif not f[2] then
      redis.call('LREM', processing, 1, id)
      quarantine(id, id, 'the ready list held an entry with no job stored under it; it was set aside instead of run')
      notes[#notes + 1] = { 'unknown-id', id, '' }
    elseif not f[1] then
      -- A hash with a job but no state (written by hand, or half of an older write): no script can tell what
      -- it is doing, so it is set aside with its text rather than dropped or run.
      redis.call('LREM', processing, 1, id)
      quarantine(id, f[2], 'the stored job has no state field; it was set aside instead of run')
      notes[#notes + 1] = { 'no-state', id, '' }
    elseif f[1] ~= 'ready' and f[1] ~= 'running' and f[1] ~= 'completed' and f[1] ~= 'dead' and f[1] ~= 'cancelled' then
      -- A state no jfast version writes: nothing would ever run or settle it, so it is set aside with its text.
      local problem = 'its state field is "' .. string.sub(f[1], 1, 40) .. '", not a state of a job; it was set aside instead of run'
      redis.call('LREM', processing, 1, id)
      quarantine(id, f[2], problem)
      notes[#notes + 1] = { 'set-aside', id, problem }
    elseif f[1] ~= 'ready' then
      -- A second reference to a job that is running, settled or dead: drop the reference, keep the job.
      redis.call('LREM', processing, 1, id)
      notes[#notes + 1] = { 'stale-reference', id, f[1] or '' }
    else
      local task = any_paused and task_of(f[2])
      if task and redis.call('HEXISTS', paused, task) == 1 then
        redis.call('LREM', processing, 1, id)
        redis.call('LPUSH', parked_prefix .. task, id)
      elseif not count_attempt(jkey) then
        -- An attempts field that is not an integer: counting the attempt fails, and the entry, already taken
        -- from the ready list, would be lost with this claim. Set aside instead.
        local problem = 'its attempts field is not an integer; it was set aside instead of run'
        redis.call('LREM', processing, 1, id)
        quarantine(id, f[2], problem)
        notes[#notes + 1] = { 'set-aside', id, problem }
      else
        redis.call('HSET', jkey, 'state', 'running', 'owner', worker, 'lease', deadline)
        redis.call('ZADD', RUNNING, deadline, id)
        deliver(jkey, id)
      end
    end
  end
end

return { jobs, notes, redis.call('LRANGE', processing, 0, -1) }
