-- list-keyed: one window of the waiting jobs no ready list holds, for the ready state's listing (listing.ts,
-- docs/redis.md#listing-jobs): a limited or paused task's set-aside jobs (<parked prefix><task>) and a keyed task's
-- jobs on their keys' own lists (<limit prefix>kparked:<task>:<key>: a fair task's due jobs, a job over its key's
-- limit, an ordered key's next jobs). The keys with such a list are found as depths-keyed.lua finds them: the task's
-- kturnq ZSET (a fair task) and kwaiting SET (the others).
-- The sequence, oldest first: tasks by name; in each, its set-aside list, then its keys' lists by key; each list
-- from its oldest end (the right). 'newest' is that sequence reversed. One LLEN per list, so the cost is one command
-- per task and per key with waiting jobs, plus one LRANGE per list the window reaches: no job is read here.
-- ARGV 6 limit key prefix, 7 parked list prefix, 8 offset into the sequence, 9 ids wanted, 10 'oldest' | 'newest',
-- 11 limits HASH, 12 paused HASH, 13.. the caller's keyed tasks.
-- Returns { total (jobs on all these lists), ids (at most ARGV[9], from the offset) }.
local prefix, parked_prefix = ARGV[6], ARGV[7]
local skip, want, oldest = tonumber(ARGV[8]), tonumber(ARGV[9]), ARGV[10] == 'oldest'
local named, tasks = {}, {}
local function name(task)
  if not named[task] then
    named[task] = true
    tasks[#tasks + 1] = task
  end
end
for _, task in ipairs(redis.call('HKEYS', ARGV[11])) do name(task) end
for _, task in ipairs(redis.call('HKEYS', ARGV[12])) do name(task) end
for i = 13, #ARGV do name(ARGV[i]) end
table.sort(tasks)
local lists = {}
for _, task in ipairs(tasks) do
  lists[#lists + 1] = parked_prefix .. task
  local seen, keys = {}, {}
  local function add(key)
    if not seen[key] then
      seen[key] = true
      keys[#keys + 1] = key
    end
  end
  for _, key in ipairs(redis.call('ZRANGE', prefix .. 'kturnq:' .. task, 0, -1)) do add(key) end
  for _, key in ipairs(redis.call('SMEMBERS', prefix .. 'kwaiting:' .. task)) do add(key) end
  table.sort(keys)
  for _, key in ipairs(keys) do lists[#lists + 1] = prefix .. 'kparked:' .. task .. ':' .. key end
end
local total, ids = 0, {}
local first, last, step = 1, #lists, 1
if not oldest then first, last, step = #lists, 1, -1 end
for i = first, last, step do
  local size = redis.call('LLEN', lists[i])
  total = total + size
  if #ids < want and size > 0 then
    if skip >= size then
      skip = skip - size
    else
      local n = math.min(want - #ids, size - skip)
      if oldest then
        local part = redis.call('LRANGE', lists[i], -(skip + n), -(skip + 1))
        for j = #part, 1, -1 do ids[#ids + 1] = part[j] end
      else
        for _, id in ipairs(redis.call('LRANGE', lists[i], skip, skip + n - 1)) do ids[#ids + 1] = id end
      end
      skip = 0
    end
  end
end
return { total, ids }
