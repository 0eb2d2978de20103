-- claim: leases up to `limit` jobs to a worker and counts their attempt, in one step with the move into the
-- worker's processing list, so a job is never in a processing list without a lease or vice versa.
-- A paused task's job taken from the ready list is not claimed: it is parked on that task's parked list, its
-- attempts untouched, until resume.lua puts it back (docs/worker.md#pausing-a-task).
-- A limited task's job over its limit (docs/tasks.md#limits) is parked the same way, its attempt untouched, and
-- taken back first by a later claim that finds room under the limit.
-- ARGV 6 worker id, 7 limit, 8 lease (ms), 9 worker heartbeat TTL (ms), 10 worker-lost error tail,
--      11 paused HASH, 12 parked LIST prefix, 13 limits HASH ('' when the queue has no limited task),
--      14 limit key prefix (holders SET and starts ZSET of a task: <prefix>holders:<task>, <prefix>starts:<task>),
--      15 how many limited jobs this claim may start (the worker's free slots),
--      16.. ids the caller already holds for this worker (delivered and not yet settled)
-- Returns { jobs, notes, processing }:
--   jobs: { id, json, attempts, errors, available_at } each
--   notes: { kind, id, detail } for ready-list entries set aside instead of delivered
--   processing: the worker's processing list afterwards (the caller forgets held ids no longer in it)
local worker, limit, lease_ms = ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8])
local ttl_ms, lost_tail = tonumber(ARGV[9]), ARGV[10]
local paused, parked_prefix = ARGV[11], ARGV[12]
local limits_key, limit_prefix, startable = ARGV[13], ARGV[14], tonumber(ARGV[15])
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
for i = 16, #ARGV do
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

-- Task limits: task -> { conc, max, per, room }; room (how many more may start now) is counted once per claim,
-- when the task's first job comes up. A holder whose job no longer runs under a live lease (completed, retried,
-- released, dead, lease expired) is dropped from the set here, so no settling script has to.
local limits = nil
if limits_key ~= '' then
  local flat = redis.call('HGETALL', limits_key)
  if #flat > 0 then
    limits = {}
    for i = 1, #flat, 2 do
      local c, m, p = string.match(flat[i + 1], '^(%d*)|(%d*)|(%d*)$')
      limits[flat[i]] = { conc = tonumber(c), max = tonumber(m), per = tonumber(p) }
    end
  end
end

local function room_of(task)
  local l = limits[task]
  if startable <= 0 then
    return 0
  end
  if l.room == nil then
    local room = limit
    if l.conc then
      local holders_key = limit_prefix .. 'holders:' .. task
      local live = 0
      for _, id in ipairs(redis.call('SMEMBERS', holders_key)) do
        local h = redis.call('HMGET', job_key(id), 'state', 'lease')
        if h[1] == 'running' and (tonumber(h[2]) or 0) >= NOW then
          live = live + 1
        else
          redis.call('SREM', holders_key, id)
        end
      end
      room = math.min(room, l.conc - live)
    end
    if l.max then
      local starts_key = limit_prefix .. 'starts:' .. task
      redis.call('ZREMRANGEBYSCORE', starts_key, '-inf', NOW - l.per)
      room = math.min(room, l.max - redis.call('ZCARD', starts_key))
    end
    l.room = room
  end
  return l.room
end

local function take_slot(task, id)
  local l = limits[task]
  l.room = l.room - 1
  startable = startable - 1
  if l.conc then
    redis.call('SADD', limit_prefix .. 'holders:' .. task, id)
  end
  if l.max then
    local starts_key = limit_prefix .. 'starts:' .. task
    redis.call('ZADD', starts_key, NOW, id .. '@' .. NOW)
    redis.call('PEXPIRE', starts_key, l.per + 1000)
  end
end

-- A limited task's parked jobs come first while it has room (oldest on the right); a parked entry whose job is no
-- longer ready (cancelled, deleted) is dropped.
if limits then
  for task, _ in pairs(limits) do
    if #jobs >= limit then break end
    if not (any_paused and redis.call('HEXISTS', paused, task) == 1) and room_of(task) > 0 then
      local list = parked_prefix .. task
      while #jobs < limit and room_of(task) > 0 do
        local id = redis.call('RPOP', list)
        if not id then break end
        local jkey = job_key(id)
        if redis.call('HGET', jkey, 'state') == 'ready' and count_attempt(jkey) then
          redis.call('LPUSH', processing, id)
          redis.call('HSET', jkey, 'state', 'running', 'owner', worker, 'lease', deadline)
          redis.call('ZADD', RUNNING, deadline, id)
          take_slot(task, id)
          deliver(jkey, id)
        end
      end
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
    elseif f[1] ~= 'ready' and f[1] ~= 'running' and f[1] ~= 'completed' and f[1] ~= 'dead' and f[1] ~= 'cancelled'
      and f[1] ~= 'waiting' then
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
      local task = (any_paused or limits) and task_of(f[2])
      local limited = task and limits and limits[task]
      if (task and any_paused and redis.call('HEXISTS', paused, task) == 1) or (limited and room_of(task) <= 0) then
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
        if limited then
          take_slot(task, id)
        end
        deliver(jkey, id)
      end
    end
  end
end

return { jobs, notes, redis.call('LRANGE', processing, 0, -1) }
