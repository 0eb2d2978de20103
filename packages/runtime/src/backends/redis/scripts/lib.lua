-- Shared helpers, loaded in front of every script of the Redis queue backend (see ../scripts.ts).
-- Every script is one atomic step: Redis runs it to the end before any other command, so a crash of the
-- calling process between two commands can never leave a job half-moved.
--
-- KEYS (the same seven for every script, in this order; see ../keys.ts):
--   1 ready LIST (priority 5), 2 scheduled ZSET, 3 running ZSET, 4 dead ZSET, 5 completed ZSET, 6 workers ZSET,
--   7 wake channel (pub/sub, not a key: declared for its name, in the queue's hash tag like the rest)
-- ARGV 1..5 (the same for every script):
--   1 job hash prefix, 2 processing list prefix, 3 worker heartbeat prefix, 4 now (ms), 5 now (ISO-8601)
-- Per-job and per-worker keys are the prefixes above plus an id. They share the queue's hash tag, so they
-- live in the same Cluster slot as the declared KEYS.
local READY, SCHEDULED, RUNNING, DEAD, COMPLETED, WORKERS = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local WAKE = KEYS[7]
local JOB_PREFIX, PROCESSING_PREFIX, WORKER_PREFIX = ARGV[1], ARGV[2], ARGV[3]
local NOW, NOW_ISO = tonumber(ARGV[4]), ARGV[5]

local function job_key(id)
  return JOB_PREFIX .. id
end

-- errors is a JSON array kept as text; appending is text surgery so the stored job JSON is never
-- re-encoded by Lua (cjson would turn [] into {} and round numbers in payloads).
local function append_error(jkey, err_json)
  local errs = redis.call('HGET', jkey, 'errors')
  if (not errs) or errs == '' or errs == '[]' then
    errs = '[' .. err_json .. ']'
  else
    errs = string.sub(errs, 1, -2) .. ',' .. err_json .. ']'
  end
  redis.call('HSET', jkey, 'errors', errs)
end

-- The job's `runs` (a JSON array, grown as `errors` is) with an attempt's record (core/job-life.ts) added, for the
-- caller to write with its own HSET; the progress the running job wrote goes (its last value is in the record,
-- and only a record with a progress can follow one). nil for '': nothing to add. `runs`: the field as the caller
-- read it already (false: absent), else nil to read it here.
local function runs_with(jkey, run_json, runs)
  if run_json == nil or run_json == '' then
    return nil
  end
  if string.find(run_json, '"progress":', 1, true) then
    redis.call('HDEL', jkey, 'progress')
  end
  if runs == nil then
    runs = redis.call('HGET', jkey, 'runs')
  end
  if (not runs) or runs == '' or runs == '[]' then
    return '[' .. run_json .. ']'
  end
  return string.sub(runs, 1, -2) .. ',' .. run_json .. ']'
end

-- runs_with, written.
local function append_run(jkey, run_json)
  local runs = runs_with(jkey, run_json)
  if runs then
    redis.call('HSET', jkey, 'runs', runs)
  end
end

-- The task of a stored job, read from its JSON without decoding the payload: the JSON is written by
-- JSON.stringify(job.toJSON()), whose first two keys are "id" and "task". A quote inside the id is escaped,
-- so the first `"task":"` is the task key. nil for text that is not a job.
local function task_of(json)
  if not json then
    return nil
  end
  return string.match(json, '"task":"([^"]*)"')
end

-- Priorities (docs/tasks.md#priority): one ready list per priority, claimed 0 first. Priority 5, the default,
-- is READY itself, so plain jobs take the same path as before there were priorities; priority p is
-- READY .. ':' .. p (keys.ts readyAt), in the queue's hash tag like every key. A job of another priority keeps
-- it in its hash's `priority` field; no field is priority 5.
local DEFAULT_PRIORITY = 5
local READY_LISTS = {}
for p = 0, 9 do
  READY_LISTS[p + 1] = p == DEFAULT_PRIORITY and READY or (READY .. ':' .. p)
end

local function ready_key(priority)
  return READY_LISTS[priority + 1] or READY
end

local function priority_of(jkey)
  return tonumber(redis.call('HGET', jkey, 'priority')) or DEFAULT_PRIORITY
end

-- The priority in a job's JSON, read without decoding it: JSON.stringify(job.toJSON()) writes it right after
-- the id and the task (whose quotes are escaped), ahead of the payload. No priority: the default.
local function priority_in(json)
  return tonumber(string.match(json, '"priority":(%d)[,}]')) or DEFAULT_PRIORITY
end

local function remember_priority(jkey, priority)
  if priority ~= DEFAULT_PRIORITY then
    redis.call('HSET', jkey, 'priority', priority)
  end
end

-- True when any ready list holds a job (an empty list does not exist). One command for all ten.
local function any_ready()
  return redis.call('EXISTS', unpack(READY_LISTS)) > 0
end

-- Idle workers block on READY alone (ready-waiter.ts): a job pushed onto another priority's list is announced
-- on the wake channel instead, as a job due now, once per script.
local announced = false
local function push_ready(id, priority, front)
  local list = ready_key(priority)
  if front then
    redis.call('RPUSH', list, id)
  else
    redis.call('LPUSH', list, id)
  end
  if list ~= READY and not announced then
    redis.call('PUBLISH', WAKE, NOW)
    announced = true
  end
end

local function owned_by(jkey, worker)
  local f = redis.call('HMGET', jkey, 'state', 'owner')
  return f[1] == 'running' and f[2] == worker
end

-- Takes a running job out of its owner's hands: lease, owner, entry in the owner's processing list.
-- The list is searched from its tail (count -1): a claim pushes onto the head, so the job settled next is
-- usually among the oldest, near the tail; from the head each settlement would scan nearly the whole list
-- (hundreds of ids for a worker with a prefetch buffer and batched completions). An id is in a processing list
-- at most once (the claim drops second references), so the end the search starts from changes nothing else.
local function detach(jkey, id)
  local owner = redis.call('HGET', jkey, 'owner')
  if owner then
    redis.call('LREM', PROCESSING_PREFIX .. owner, -1, id)
  end
  redis.call('ZREM', RUNNING, id)
  redis.call('HDEL', jkey, 'owner', 'lease')
end

-- Claimable at avail_ms: on its priority's ready list when due, else in the scheduled set until promote_due moves
-- it. front = true puts it on the claiming end (a reclaimed job has waited longest). priority: read from the
-- hash when not given.
local function make_ready(jkey, id, avail_ms, front, priority)
  redis.call('HSET', jkey, 'state', 'ready', 'available_at', avail_ms)
  if avail_ms <= NOW then
    push_ready(id, priority or priority_of(jkey), front)
  else
    redis.call('ZADD', SCHEDULED, avail_ms, id)
  end
end

-- Flows (docs/redis.md#flows). A step's job hash carries its bookkeeping (keys.ts): flow, children, pending, run,
-- counted. Its outcome is counted in the script that writes the outcome, once per child: O(children), never a
-- scan of the flow. The flow's keys share the queue's hash tag; their names are built from READY's, as keys.ts does.
local STEM = string.sub(READY, 1, -7)
local FLOW_PREFIX = STEM .. ':flow:'
local FLOWS = STEM .. ':flows'
local WAITING = STEM .. ':waiting'

-- One parent of `cid` finished: at no parent left, a waiting child becomes ready as enqueue.lua would make it
-- (its priority, its available_at; a later time is announced so idle workers re-plan their wait).
local function count_parent(cid)
  local ckey = job_key(cid)
  if redis.call('EXISTS', ckey) == 0 then
    return
  end
  if redis.call('HINCRBY', ckey, 'pending', -1) > 0 then
    return
  end
  local c = redis.call('HMGET', ckey, 'state', 'available_at')
  if c[1] == 'waiting' then
    local avail = tonumber(c[2]) or NOW
    redis.call('ZREM', WAITING, cid)
    make_ready(ckey, cid, avail, false)
    if avail > NOW then
      redis.call('PUBLISH', WAKE, avail)
    end
  end
end

-- Counts the children of a step, all or only those declared onParentFailure "run".
local function count_children(children, only_run, skip_run)
  if not children or children == '' then
    return
  end
  local every = not only_run and not skip_run
  for _, cid in ipairs(cjson.decode(children)) do
    if every then
      count_parent(cid)
    else
      local run = redis.call('HGET', job_key(cid), 'run') == '1'
      if run == (only_run == true) then
        count_parent(cid)
      end
    end
  end
end

-- A step completed (just now, in the calling script): counted for its flow and for each child, except "run"
-- children already counted when it died earlier (`counted`). Sets finished_at when every step has completed, and
-- says so (true).
local function step_completed(jkey, flow_id)
  local fkey = FLOW_PREFIX .. flow_id
  local f = redis.call('HMGET', jkey, 'children', 'counted')
  if f[2] ~= '1' then
    redis.call('HSET', jkey, 'counted', '1')
  end
  count_children(f[1], false, f[2] == '1')
  if redis.call('EXISTS', fkey) == 1 then
    local done = redis.call('HINCRBY', fkey, 'completed', 1)
    if done >= (tonumber(redis.call('HGET', fkey, 'total')) or 0) and redis.call('HEXISTS', fkey, 'finished_at') == 0 then
      redis.call('HSET', fkey, 'finished_at', NOW)
      return true
    end
  end
  return false
end

-- A step died: counted for its flow; at its first outcome, its "run" children are counted (the others wait).
local function step_died(jkey, flow_id)
  local fkey = FLOW_PREFIX .. flow_id
  if redis.call('EXISTS', fkey) == 1 then
    redis.call('HINCRBY', fkey, 'dead', 1)
  end
  local f = redis.call('HMGET', jkey, 'children', 'counted')
  if f[2] == '1' then
    return
  end
  redis.call('HSET', jkey, 'counted', '1')
  count_children(f[1], true, false)
end

-- A dead step was retried: its flow runs again.
local function step_revived(flow_id)
  local fkey = FLOW_PREFIX .. flow_id
  if (tonumber(redis.call('HGET', fkey, 'dead')) or 0) > 0 then
    redis.call('HINCRBY', fkey, 'dead', -1)
  end
end

-- Deletes a flow's own keys (not its steps').
local function drop_flow(flow_id)
  local fkey = FLOW_PREFIX .. flow_id
  redis.call('DEL', fkey, fkey .. ':steps')
  redis.call('ZREM', FLOWS, flow_id)
end

-- A completed flow with no completed job to keep ([plugin.queue] keep_completed = false): every step and the flow
-- are forgotten, once, when its last step completes.
local function forget_flow(flow_id)
  local fkey = FLOW_PREFIX .. flow_id
  for _, id in ipairs(redis.call('LRANGE', fkey .. ':steps', 0, -1)) do
    redis.call('DEL', job_key(id))
    redis.call('ZREM', COMPLETED, id)
  end
  drop_flow(flow_id)
end

-- Deletes a finished job's hash; the last step of a flow to go takes the flow's keys with it (retention).
local function forget_job(jkey)
  local flow_id = redis.call('HGET', jkey, 'flow')
  redis.call('DEL', jkey)
  if flow_id and redis.call('HINCRBY', FLOW_PREFIX .. flow_id, 'stored', -1) <= 0 then
    drop_flow(flow_id)
  end
end

local function make_dead(jkey, id)
  redis.call('HSET', jkey, 'state', 'dead', 'died_at', NOW)
  redis.call('ZADD', DEAD, NOW, id)
  local flow_id = redis.call('HGET', jkey, 'flow')
  if flow_id then
    step_died(jkey, flow_id)
  end
end

-- A waiting, ready or running job becomes `cancelled` (cancel.lua, cancel-flow.lua); the caller has taken a
-- ready one off its ready and parked lists. A running one keeps its owner: extend.lua tells the worker. The hash
-- expires after `keep` ms (0: the pruner deletes it); the cancelled ZSET orders it for the pruner.
local function cancel_job(jkey, id, state, keep, cancelled_set)
  if state == 'running' then
    redis.call('ZREM', RUNNING, id)
  elseif state == 'waiting' then
    redis.call('ZREM', WAITING, id)
  else
    redis.call('ZREM', SCHEDULED, id)
    redis.call('HDEL', jkey, 'owner')
  end
  redis.call('HDEL', jkey, 'lease')
  redis.call('HSET', jkey, 'state', 'cancelled', 'cancelled_at', NOW)
  if keep > 0 then
    redis.call('PEXPIRE', jkey, keep)
  end
  redis.call('ZADD', cancelled_set, NOW, id)
end

-- Takes the ids of the set `ids` off `list`: a few by LREM, many in one pass that rewrites the list in order.
local function remove_from_list(list, ids)
  local n = 0
  for _ in pairs(ids) do
    n = n + 1
  end
  if n <= 8 then
    for id, _ in pairs(ids) do
      redis.call('LREM', list, 0, id)
    end
    return
  end
  local kept = {}
  for _, id in ipairs(redis.call('LRANGE', list, 0, -1)) do
    if not ids[id] then
      kept[#kept + 1] = id
    end
  end
  redis.call('DEL', list)
  for i = 1, #kept, 1000 do
    redis.call('RPUSH', list, unpack(kept, i, math.min(i + 999, #kept)))
  end
end

-- Stores a new job's hash: its JSON as enqueued, beside it `max_attempts` and the pairs in `extra` (state, due
-- time, priority). `attempts` and `errors` are written only when they differ from what the JSON says (0 and []):
-- every reader lays a field that is there over the JSON and takes an absent one from it (decode.ts; here
-- `tonumber(...) or 0`, append_error, HINCRBY at the claim), and two fields fewer save about 170 bytes of each
-- waiting job on a server whose job hashes are tables (docs/redis.md#memory).
local function store_job(jkey, json, attempts, errors, max_attempts, extra)
  if attempts == '0' and errors == '[]' then
    return redis.call('HSET', jkey, 'json', json, 'max_attempts', max_attempts, unpack(extra))
  end
  return redis.call('HSET', jkey, 'json', json, 'attempts', attempts, 'errors', errors, 'max_attempts', max_attempts, unpack(extra))
end

-- The running attempt is spent (its worker vanished): record "worker lost", then reclaim, or dead-letter when
-- that was the last attempt. lost_tail is the error's JSON after its "attempt" and "at" fields, built in
-- TypeScript from core's workerLostError so the wording lives in one place.
local function lose(jkey, id, lost_tail)
  local f = redis.call('HMGET', jkey, 'attempts', 'max_attempts', 'available_at')
  local attempts = tonumber(f[1]) or 0
  local max = tonumber(f[2]) or 1
  if max < 1 then
    max = 1
  end
  detach(jkey, id)
  append_error(jkey, '{"attempt":' .. attempts .. ',"at":' .. cjson.encode(NOW_ISO) .. ',' .. lost_tail)
  if attempts >= max then
    make_dead(jkey, id)
  else
    make_ready(jkey, id, math.min(tonumber(f[3]) or NOW, NOW), true)
  end
end

-- Due delayed jobs and retries move to their ready list in one step: ZREM and LPUSH happen together or not at all.
local function promote_due(max)
  local ids = redis.call('ZRANGEBYSCORE', SCHEDULED, '-inf', NOW, 'LIMIT', 0, max)
  for _, id in ipairs(ids) do
    redis.call('ZREM', SCHEDULED, id)
    push_ready(id, priority_of(job_key(id)), false)
  end
  return #ids
end

-- Leases that ran out: the worker stopped heartbeating without settling the job.
local function reap_expired(lost_tail, max)
  local ids = redis.call('ZRANGEBYSCORE', RUNNING, '-inf', '(' .. NOW, 'LIMIT', 0, max)
  for _, id in ipairs(ids) do
    local jkey = job_key(id)
    if redis.call('HGET', jkey, 'state') == 'running' then
      lose(jkey, id, lost_tail)
    else
      redis.call('ZREM', RUNNING, id)
    end
  end
  return #ids
end

-- Every job of a worker that is gone (or shutting down) comes back under the lease-expiry rule.
local function recover_list(worker, lost_tail)
  local list = PROCESSING_PREFIX .. worker
  local ids = redis.call('LRANGE', list, 0, -1)
  local n = 0
  for _, id in ipairs(ids) do
    local jkey = job_key(id)
    if owned_by(jkey, worker) then
      lose(jkey, id, lost_tail)
      n = n + 1
    end
  end
  redis.call('DEL', list)
  return n
end

-- Something on the ready list that cannot become a job (an id with nothing stored under it, or stored text
-- that is not a job) is set aside as a dead letter, where `jfast jobs dead` shows it and /ready degrades,
-- instead of reaching a worker. The original text stays in the hash's `raw` field. Task, class and reason are
-- core/corrupt-job.ts's, the same on every backend.
local function quarantine(id, raw, message)
  local jkey = job_key(id)
  local synthetic = '{"id":' .. cjson.encode(id)
    .. ',"task":"jfast.corrupt_job","payload":{"raw":' .. (raw and cjson.encode(raw) or 'null') .. '}'
    .. ',"attempts":0,"maxAttempts":1,"availableAt":' .. cjson.encode(NOW_ISO)
    .. ',"createdAt":' .. cjson.encode(NOW_ISO)
    .. ',"tenantId":null,"requestId":null,"trace":null,"errors":[],"timeoutMs":null}'
  local attempts = tonumber(redis.call('HGET', jkey, 'attempts')) or 0
  redis.call('HSET', jkey, 'json', synthetic, 'attempts', attempts, 'max_attempts', 1, 'available_at', NOW)
  if raw then
    redis.call('HSET', jkey, 'raw', raw)
  end
  append_error(jkey, '{"attempt":' .. attempts .. ',"at":' .. cjson.encode(NOW_ISO)
    .. ',"class":"CorruptJob","message":' .. cjson.encode(message) .. ',"reason":"corrupt job"}')
  make_dead(jkey, id)
end

local function heartbeat(worker, ttl_ms)
  redis.call('SET', WORKER_PREFIX .. worker, NOW, 'PX', ttl_ms)
  redis.call('ZADD', WORKERS, NOW, worker)
end

-- Selects dead letters for retry-dead and discard-dead (ARGV 6 mode "ids" | "all", 7 batch size, 8.. ids)
-- and calls act(jkey, id) on each real one. Returns { acted, missing }. An entry of the dead set without its
-- job is dropped and reported missing, so "all" always makes progress.
local function for_each_dead(act)
  local acted, missing = {}, {}
  local ids = {}
  if ARGV[6] == 'all' then
    ids = redis.call('ZRANGE', DEAD, 0, tonumber(ARGV[7]) - 1)
  else
    for i = 8, #ARGV do
      ids[#ids + 1] = ARGV[i]
    end
  end
  for _, id in ipairs(ids) do
    local jkey = job_key(id)
    local listed = redis.call('ZSCORE', DEAD, id)
    if listed and redis.call('HGET', jkey, 'state') == 'dead' then
      redis.call('ZREM', DEAD, id)
      act(jkey, id)
      acted[#acted + 1] = id
    else
      if listed then
        redis.call('ZREM', DEAD, id)
      end
      missing[#missing + 1] = id
    end
  end
  return { acted, missing }
end

-- Fair share (docs/flow-control.md#fair-share-across-keys): a key with waiting jobs joins its task's keys in turn
-- order (<prefix>kturnq:<task> ZSET, key → its virtual time: the turns it took, never behind the least served
-- waiting key, the first one), so a claim reads the first keys in turn order instead of every key.
local function queue_key_turn(prefix, task, key)
  local turnq = prefix .. 'kturnq:' .. task
  if redis.call('ZSCORE', turnq, key) then
    return
  end
  local first = redis.call('ZRANGE', turnq, 0, 0, 'WITHSCORES')
  local least = tonumber(first[2])
  local at = tonumber(redis.call('HGET', prefix .. 'kturns:' .. task, key)) or least or 0
  if least and at < least then
    at = least
  end
  redis.call('ZADD', turnq, at, key)
end

-- A waiting job of a keyed task may sit on its key's own list (<prefix>kparked:<task>:<key>); a script that ends or
-- deletes such a job takes it off there too, so the list holds only waiting jobs and queue depths, which count
-- it (depths-keyed.lua), stay true. Rare (cancel, delete, expiry), so one LREM of the key's list is acceptable.
local function take_off_key_list(prefix, json, id)
  if not prefix or prefix == '' or not json then
    return
  end
  local task = task_of(json)
  local ok, decoded = pcall(cjson.decode, json)
  if task and ok and type(decoded) == 'table' and type(decoded.limitKey) == 'string' then
    redis.call('LREM', prefix .. 'kparked:' .. task .. ':' .. decoded.limitKey, 0, id)
  end
end
