-- depths-keyed: the waiting jobs of keyed tasks held on their keys' own lists (<prefix>kparked:<task>:<key>: a fair
-- task's due jobs, a job over its key's limit, an ordered key's next jobs), which no ready list holds. The keys with
-- such a list are the task's kturnq ZSET (a fair task) and kwaiting SET (the others): one LLEN per key with waiting
-- jobs, none per job. A key the claim has not yet dropped from them may have an empty list, which counts 0.
-- With a tenant, only its jobs count: each list's oldest jobs are read (at most `sample` jobs in all) and the count
-- scaled to the list; past that many, the lists left are not read and the answer says it is not exact.
-- The tasks read are those of the limits HASH (every process declares its limited tasks there at start, so a
-- process that declared none, such as the CLI, counts them too) and those the caller names.
-- ARGV 6 limit key prefix, 7 tenant id ('' for all tenants), 8 sample, 9 limits HASH, 10.. the caller's keyed tasks.
-- Returns { exact (1 or 0), { task, count, task, count, ... } } for the tasks with such jobs.
local prefix, tenant, budget = ARGV[6], ARGV[7], tonumber(ARGV[8])
local out, exact = {}, 1
local function of_tenant(list, size)
  if budget <= 0 then
    exact = 0
    return 0
  end
  local ids = redis.call('LRANGE', list, -math.min(size, budget), -1)
  budget = budget - #ids
  local read, mine = 0, 0
  for _, id in ipairs(ids) do
    local json = redis.call('HGET', job_key(id), 'json')
    if json then
      read = read + 1
      local ok, decoded = pcall(cjson.decode, json)
      if ok and type(decoded) == 'table' and decoded.tenantId == tenant then
        mine = mine + 1
      end
    end
  end
  if #ids < size then
    exact = 0
    return read > 0 and math.floor(mine * size / read + 0.5) or 0
  end
  return mine
end
local tasks, named = {}, {}
for _, task in ipairs(redis.call('HKEYS', ARGV[9])) do
  named[task] = true
  tasks[#tasks + 1] = task
end
for i = 10, #ARGV do
  if not named[ARGV[i]] then
    named[ARGV[i]] = true
    tasks[#tasks + 1] = ARGV[i]
  end
end
for _, task in ipairs(tasks) do
  local seen, n = {}, 0
  local function add(key)
    if not seen[key] then
      seen[key] = true
      local list = prefix .. 'kparked:' .. task .. ':' .. key
      local size = redis.call('LLEN', list)
      if tenant == '' or size == 0 then
        n = n + size
      else
        n = n + of_tenant(list, size)
      end
    end
  end
  for _, key in ipairs(redis.call('ZRANGE', prefix .. 'kturnq:' .. task, 0, -1)) do
    add(key)
  end
  for _, key in ipairs(redis.call('SMEMBERS', prefix .. 'kwaiting:' .. task)) do
    add(key)
  end
  if n > 0 then
    out[#out + 1] = task
    out[#out + 1] = n
  end
end
return { exact, out }
