-- prune-keys: the pruner's pass over keyed tasks' per-key state (docs/flow-control.md#pruning-per-key-state), for
-- keys with no job waiting on their key's list. Per task, a bounded step of a scan that goes on where the last call
-- stopped (its cursor kept in <prefix>kprune:<task> and kprune-o:<task>):
--   kturnq / kwaiting: a key whose list is gone leaves them (as the claim drops it when it finds the list empty);
--   kturns / kticks HASH: a key's turn count and tick go once the key is in neither and no job of the key holds a
--     slot (its kholders SET is empty) or runs (a job in the running set with that key); a key that comes back
--     starts level with the least served key, as a new key does;
--   korder / kordered: an ordered key's head goes once that job completed, was cancelled or expired, or is gone
--     (the key is free either way); a dead head is kept, whatever onDead says, since it may block its key.
-- ARGV 6 limit key prefix, 7 limits HASH, 8 how many fields or members to look at per task and structure,
--      9.. the caller's keyed tasks (besides those of the limits HASH).
-- Returns { how many entries went, 1 when a scan has more to read (else 0) }.
local prefix, count = ARGV[6], tonumber(ARGV[8])
local tasks, named = {}, {}
for _, task in ipairs(redis.call('HKEYS', ARGV[7])) do
  named[task] = true
  tasks[#tasks + 1] = task
end
for i = 9, #ARGV do
  if not named[ARGV[i]] then
    named[ARGV[i]] = true
    tasks[#tasks + 1] = ARGV[i]
  end
end
local pruned, more = 0, 0

-- The (task, key) pairs of jobs running now: read once, only when a task has turn counts to look at.
local running = nil
local function running_keys()
  if running then
    return running
  end
  running = {}
  for _, id in ipairs(redis.call('ZRANGE', RUNNING, 0, -1)) do
    local json = redis.call('HGET', job_key(id), 'json')
    local task = task_of(json)
    if task then
      local ok, decoded = pcall(cjson.decode, json)
      if ok and type(decoded) == 'table' and type(decoded.limitKey) == 'string' then
        running[task .. '\0' .. decoded.limitKey] = true
      end
    end
  end
  return running
end

local function step(cursor_key, scan)
  local cursor = redis.call('GET', cursor_key) or '0'
  local got = scan(cursor)
  if got[1] == '0' then
    redis.call('DEL', cursor_key)
  else
    redis.call('SET', cursor_key, got[1])
    more = 1
  end
  return got[2]
end

for _, task in ipairs(tasks) do
  local turnq = prefix .. 'kturnq:' .. task
  local waiting = prefix .. 'kwaiting:' .. task
  local turns = prefix .. 'kturns:' .. task
  local ticks = prefix .. 'kticks:' .. task
  local ordered = prefix .. 'kordered:' .. task
  local function list_of(key)
    return prefix .. 'kparked:' .. task .. ':' .. key
  end
  -- Keys left in turn order or the waiting set with no list: at most `count` of each, the earliest turns first.
  for _, key in ipairs(redis.call('ZRANGE', turnq, 0, count - 1)) do
    if redis.call('EXISTS', list_of(key)) == 0 then
      redis.call('ZREM', turnq, key)
      pruned = pruned + 1
    end
  end
  for _, key in ipairs(redis.call('SRANDMEMBER', waiting, count)) do
    if redis.call('EXISTS', list_of(key)) == 0 then
      redis.call('SREM', waiting, key)
      pruned = pruned + 1
    end
  end
  if redis.call('EXISTS', turns) == 1 or redis.call('EXISTS', ticks) == 1 then
    local fields = step(prefix .. 'kprune:' .. task, function(cursor)
      local a = redis.call('HSCAN', turns, cursor, 'COUNT', count)
      return a
    end)
    -- kticks holds the same keys (and '' for the task's counter): its fields go with kturns's.
    local seen = {}
    for i = 1, #fields, 2 do
      seen[fields[i]] = true
    end
    if redis.call('EXISTS', turns) == 0 then
      for _, key in ipairs(redis.call('HKEYS', ticks)) do
        seen[key] = true
      end
    end
    for key in pairs(seen) do
      if key ~= ''
        and not redis.call('ZSCORE', turnq, key)
        and redis.call('SISMEMBER', waiting, key) == 0
        and redis.call('EXISTS', list_of(key)) == 0
        and redis.call('SCARD', prefix .. 'kholders:' .. task .. ':' .. key) == 0
        and not running_keys()[task .. '\0' .. key] then
        pruned = pruned + redis.call('HDEL', turns, key)
        redis.call('HDEL', ticks, key)
      end
    end
    if redis.call('HLEN', ticks) == 1 and redis.call('HEXISTS', ticks, '') == 1 and redis.call('EXISTS', turns) == 0 then
      redis.call('DEL', ticks)
    end
  end
  if redis.call('EXISTS', ordered) == 1 then
    local members = step(prefix .. 'kprune-o:' .. task, function(cursor)
      return redis.call('SSCAN', ordered, cursor, 'COUNT', count)
    end)
    for _, key in ipairs(members) do
      local head_key = prefix .. 'korder:' .. task .. ':' .. key
      local head = redis.call('GET', head_key)
      local state = head and redis.call('HGET', job_key(head), 'state')
      if not head or not state or state == 'completed' or state == 'cancelled' or state == 'expired' then
        redis.call('DEL', head_key)
        redis.call('SREM', ordered, key)
        pruned = pruned + 1
      end
    end
  end
end
return { pruned, more }
