-- claim: leases up to `limit` jobs to a worker and counts their attempt, in one step with the move into the
-- worker's processing list, so a job is never in a processing list without a lease or vice versa.
-- A paused task's job taken from the ready list is not claimed: it is parked on that task's parked list, its
-- attempts untouched, until resume.lua puts it back (docs/worker.md#pausing-a-task).
-- A limited task's job over its limit (docs/tasks.md#limits) is parked the same way, its attempt untouched, and
-- taken back first by a later claim that finds room under the limit. A task with fairness
-- (docs/flow-control.md#fair-share-across-keys) keeps its due jobs on one list per key (enqueue-keyed.lua; a job
-- that comes due through the ready list is moved to its key's list here): its keys take turns, each at its
-- virtual time (<prefix>kturns:<task> HASH key → turns taken, never behind the least served waiting key) plus
-- 1/weight per job; the keys with waiting jobs are kept in turn order (kturnq, lib.lua queue_key_turn), so a claim
-- reads about as many keys as it claims jobs, not every key waiting nor their backlogs. A task with per-key concurrency
-- (docs/flow-control.md#per-key-concurrency) parks a job whose key is at its limit on that key's own list, so a
-- later claim takes back only the keys with room, one list per key, never reading the jobs behind a full key.
-- ARGV 6 worker id, 7 limit, 8 lease (ms), 9 worker heartbeat TTL (ms), 10 worker-lost error tail,
--      11 paused HASH, 12 parked LIST prefix, 13 limits HASH ('' when the queue has no limited task),
--      14 limit key prefix (holders SET and starts ZSET of a task: <prefix>holders:<task>, <prefix>starts:<task>;
--         per key: <prefix>kholders:<task>:<key> SET, <prefix>kparked:<task>:<key> LIST, <prefix>kwaiting:<task> SET
--         of the keys with parked jobs, or for a fair task <prefix>kturnq:<task> ZSET of them by turn),
--      15 how many jobs of tasks whose starts count this claim may start (the worker's free slots; a fair task with
--         no other limit counts nothing and is claimed up to `limit`, into the worker's buffer too),
--      16 '1': the ready lists before the limited tasks (every other claim of a queue with such a fair task, so its
--         backlog never holds the other tasks' jobs back),
--      17.. ids the caller already holds for this worker (delivered and not yet settled)
-- Returns { jobs, notes, processing }:
--   jobs: { id, json, attempts, errors, available_at } each
--   notes: { kind, id, detail } for ready-list entries set aside instead of delivered
--   processing: the worker's processing list afterwards (the caller forgets held ids no longer in it)
local worker, limit, lease_ms = ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8])
local ttl_ms, lost_tail = tonumber(ARGV[9]), ARGV[10]
local paused, parked_prefix = ARGV[11], ARGV[12]
local limits_key, limit_prefix, startable = ARGV[13], ARGV[14], tonumber(ARGV[15])
local ready_first = ARGV[16] == '1'
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
for i = 17, #ARGV do
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
      local c, m, p, flags, krm, krp, w = string.match(flat[i + 1], '^(%d*)|(%d*)|(%d*)|?([kfob]*)|?(%d*)|?(%d*)|?(.*)$')
      local weights = nil
      if w and w ~= '' then
        local ok, decoded = pcall(cjson.decode, w)
        if ok and type(decoded) == 'table' then weights = decoded end
      end
      limits[flat[i]] = {
        conc = tonumber(c), max = tonumber(m), per = tonumber(p), keyed = string.find(flags, 'k', 1, true) ~= nil,
        fair = string.find(flags, 'f', 1, true) ~= nil, weights = weights, keys = {},
        krmax = tonumber(krm), krper = tonumber(krp),
        ordered = string.find(flags, 'o', 1, true) ~= nil, block = string.find(flags, 'b', 1, true) ~= nil
      }
      local l = limits[flat[i]]
      -- Its jobs' keys count: per-key concurrency, a per-key rate limit, or turns.
      l.by_key = l.fair or (l.keyed and l.conc ~= nil) or l.krmax ~= nil or l.ordered
      -- Its starts count (a limit beside fairness, or no fairness): claimed only for the worker's free slots.
      l.counted = not l.fair or l.conc ~= nil or l.max ~= nil or l.keyed or l.krmax ~= nil or l.ordered
    end
  end
end

local function room_of(task)
  local l = limits[task]
  if startable <= 0 and l.counted then
    return 0
  end
  if l.room == nil then
    local room = limit
    if l.conc and not l.keyed then
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

-- Order per key (docs/flow-control.md#order-per-key): <prefix>korder:<task>:<key> STRING holds the id of the key's
-- head, the job started last; the key is free for another job once that job completed, was cancelled or is gone,
-- or died with onDead "skip"; a dead head blocks it with "block" (<prefix>kordered:<task> SET lists the keys with a
-- head, for blocked-key listings). The head itself (back from a retry) is always let through.
local function order_room(task, key, id)
  local l = limits[task]
  local holder = redis.call('GET', limit_prefix .. 'korder:' .. task .. ':' .. key)
  if not holder or holder == id then
    return 1
  end
  local state = redis.call('HGET', job_key(holder), 'state')
  if not state or state == 'completed' or state == 'cancelled' or state == 'expired' or (state == 'dead' and not l.block) then
    return 1
  end
  return 0
end

-- Per-key concurrency and rate limit: how many more jobs of the task's `key` may start now, counted once per claim
-- and key; a holder whose job no longer runs under a live lease is dropped, as room_of does for the task's.
local function key_room(task, key, id)
  local l = limits[task]
  if l.ordered and l.keys[key] == nil then
    -- Not cached: whether `id` may start depends on the job asking (the head may).
    local room = order_room(task, key, id)
    if room == 0 then
      return 0
    end
  end
  if l.keys[key] == nil then
    local room = limit
    if l.ordered then
      room = 1
    end
    if l.keyed and l.conc then
      local holders_key = limit_prefix .. 'kholders:' .. task .. ':' .. key
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
    if l.krmax then
      local starts_key = limit_prefix .. 'kstarts:' .. task .. ':' .. key
      redis.call('ZREMRANGEBYSCORE', starts_key, '-inf', NOW - l.krper)
      room = math.min(room, l.krmax - redis.call('ZCARD', starts_key))
    end
    l.keys[key] = room
  end
  return l.keys[key]
end

-- The job's key for per-key concurrency (the `limitKey` of its stored JSON); nil for a job stored without one,
-- which no key's limit counts.
local function limit_key_of(json)
  local ok, decoded = pcall(cjson.decode, json)
  if ok and type(decoded) == 'table' and type(decoded.limitKey) == 'string' then
    return decoded.limitKey
  end
  return nil
end

local function park_for_key(task, key, id)
  redis.call('LPUSH', limit_prefix .. 'kparked:' .. task .. ':' .. key, id)
  if limits[task].fair then
    queue_key_turn(limit_prefix, task, key)
  else
    redis.call('SADD', limit_prefix .. 'kwaiting:' .. task, key)
  end
end

local function take_slot(task, id, key)
  local l = limits[task]
  l.room = l.room - 1
  if l.counted then
    startable = startable - 1
  end
  if key and l.keys[key] ~= nil then
    l.keys[key] = l.keys[key] - 1
  end
  if key and l.ordered then
    redis.call('SET', limit_prefix .. 'korder:' .. task .. ':' .. key, id)
    redis.call('SADD', limit_prefix .. 'kordered:' .. task, key)
  end
  if key and l.krmax then
    local starts_key = limit_prefix .. 'kstarts:' .. task .. ':' .. key
    redis.call('ZADD', starts_key, NOW, id .. '@' .. NOW)
    redis.call('PEXPIRE', starts_key, l.krper + 1000)
  end
  if l.conc and l.keyed then
    if key then
      redis.call('SADD', limit_prefix .. 'kholders:' .. task .. ':' .. key, id)
    end
  elseif l.conc then
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
local function start_parked(task, id, jkey, key)
  if count_attempt(jkey) then
    redis.call('LPUSH', processing, id)
    redis.call('HSET', jkey, 'state', 'running', 'owner', worker, 'lease', deadline)
    redis.call('ZADD', RUNNING, deadline, id)
    take_slot(task, id, key)
    deliver(jkey, id)
  end
end

local function claim_limited()
  for task, l in pairs(limits) do
    if #jobs >= limit then break end
    if not (any_paused and redis.call('HEXISTS', paused, task) == 1) and room_of(task) > 0 then
      if l.fair then
        local waiting = limit_prefix .. 'kwaiting:' .. task
        local turnq = limit_prefix .. 'kturnq:' .. task
        local turns_key = limit_prefix .. 'kturns:' .. task
        -- When each key last took a turn (a counter): of two tied turns, the key served longer ago goes first.
        local ticks_key = limit_prefix .. 'kticks:' .. task
        -- Keys an earlier claim left in the set (a task that had no fairness then) join the turn order once.
        if redis.call('EXISTS', waiting) == 1 then
          for _, key in ipairs(redis.call('SMEMBERS', waiting)) do
            queue_key_turn(limit_prefix, task, key)
          end
          redis.call('DEL', waiting)
        end
        -- Only the first keys in turn order are read: the claim's next jobs are the earliest turns, and a key's
        -- first turn comes before its later ones, so no more keys than jobs claimed can have one of them. More
        -- are read only when keys of the first page cannot give a job (a key at its limit).
        local page = 2 * limit + 8
        local turn, seen, read, more = {}, {}, 0, true
        local function read_keys()
          local got = redis.call('ZRANGE', turnq, 0, read + page - 1, 'WITHSCORES')
          more = #got == 2 * (read + page)
          read = read + page
          for i = 1, #got, 2 do
            local key = got[i]
            if not seen[key] then
              seen[key] = true
              local w = l.weights and tonumber(l.weights[key]) or 1
              turn[#turn + 1] = { key = key, at = tonumber(got[i + 1]), w = w, tick = tonumber(redis.call('HGET', ticks_key, key)) or -1 }
            end
          end
        end
        read_keys()
        local tick = nil
        while #jobs < limit and room_of(task) > 0 do
          local best = nil
          for _, t in ipairs(turn) do
            if not t.done and (best == nil or t.at + 1 / t.w < best.at + 1 / best.w or (t.at + 1 / t.w == best.at + 1 / best.w and t.tick < best.tick)) then
              best = t
            end
          end
          if not best then
            if not more then break end
            read_keys()
          elseif key_room(task, best.key) <= 0 then
            best.done = true
          else
            local id = redis.call('RPOP', limit_prefix .. 'kparked:' .. task .. ':' .. best.key)
            if not id then
              best.done = true
              best.gone = true
              redis.call('ZREM', turnq, best.key)
            else
              local jkey = job_key(id)
              if redis.call('HGET', jkey, 'state') == 'ready' then
                best.at = best.at + 1 / best.w
                tick = (tick or tonumber(redis.call('HGET', ticks_key, '')) or 0) + 1
                best.tick = tick
                best.turned = true
                start_parked(task, id, jkey, best.key)
              end
            end
          end
        end
        -- The keys served move on by the turns they took, written once per key.
        for _, t in ipairs(turn) do
          if t.turned then
            redis.call('HSET', turns_key, t.key, t.at)
            redis.call('HSET', ticks_key, t.key, t.tick)
            if not t.gone then
              redis.call('ZADD', turnq, t.at, t.key)
            end
          end
        end
        if tick then
          redis.call('HSET', ticks_key, '', tick)
        end
      -- Per key: the keys with parked jobs, each taken back while it has room, oldest first.
      elseif l.by_key then
        local waiting = limit_prefix .. 'kwaiting:' .. task
        -- Keys left in turn order (a task that had fairness then) join the set once.
        local turnq = limit_prefix .. 'kturnq:' .. task
        if redis.call('EXISTS', turnq) == 1 then
          for _, key in ipairs(redis.call('ZRANGE', turnq, 0, -1)) do
            redis.call('SADD', waiting, key)
          end
          redis.call('DEL', turnq)
        end
        for _, key in ipairs(redis.call('SMEMBERS', waiting)) do
          if #jobs >= limit or room_of(task) <= 0 then break end
          local list = limit_prefix .. 'kparked:' .. task .. ':' .. key
          while #jobs < limit and room_of(task) > 0 and key_room(task, key) > 0 do
            local id = redis.call('RPOP', list)
            if not id then break end
            local jkey = job_key(id)
            if redis.call('HGET', jkey, 'state') == 'ready' then
              start_parked(task, id, jkey, key)
            end
          end
          if redis.call('EXISTS', list) == 0 then
            redis.call('SREM', waiting, key)
          end
        end
      end
      local list = parked_prefix .. task
      while #jobs < limit and room_of(task) > 0 do
        local id = redis.call('RPOP', list)
        if not id then break end
        local jkey = job_key(id)
        local f = redis.call('HMGET', jkey, 'state', 'json')
        if f[1] == 'ready' then
          local key = l.by_key and f[2] and limit_key_of(f[2])
          if key and (l.fair or key_room(task, key, id) <= 0) then
            park_for_key(task, key, id)
          else
            start_parked(task, id, jkey, key or nil)
          end
        end
      end
    end
  end
end

-- New work: priority 0's list first, each list oldest first. Garbage on a list is consumed too, so it cannot wake
-- waiters forever. An empty list costs one LMOVE answering nil.
local function claim_ready()
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
        local key = limited and limited.by_key and limit_key_of(f[2]) or nil
        if (task and any_paused and redis.call('HEXISTS', paused, task) == 1) or (limited and room_of(task) <= 0) then
          redis.call('LREM', processing, 1, id)
          redis.call('LPUSH', parked_prefix .. task, id)
        elseif key and limited.fair then
          -- A fair task's job that came due through the ready list (delayed, retried): to its key's list, to wait
          -- for its key's turn.
          redis.call('LREM', processing, 1, id)
          park_for_key(task, key, id)
        elseif key and key_room(task, key, id) <= 0 then
          -- Its key at its limit: parked on the key's list; the jobs behind it are still claimed.
          redis.call('LREM', processing, 1, id)
          park_for_key(task, key, id)
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
            take_slot(task, id, key)
          end
          deliver(jkey, id)
        end
      end
    end
  end
end

if ready_first then
  claim_ready()
end
if limits then
  claim_limited()
end
if not ready_first then
  claim_ready()
end

return { jobs, notes, redis.call('LRANGE', processing, 0, -1) }
