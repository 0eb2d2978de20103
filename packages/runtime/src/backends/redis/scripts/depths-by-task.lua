-- depths-by-task: depths per task from a bounded sample of each structure, for the admin's queues view. Redis
-- keeps no per-task index, so at most `sample` jobs of each structure are read (the claiming end of the ready
-- list, the earliest of the sets, the newest dead letters) and the caller scales the sample to the structure's
-- size; a structure no larger than the sample is counted exactly.
-- ARGV 6 sample size per structure, 7 tenant id ('' for all tenants), 8 paused HASH, 9 parked LIST prefix
-- Returns one entry per structure: { state, size, ids read, jobs read, { task, count, task, count, ... } }.
-- "ready" appears several times: each priority's ready list, due delayed jobs, and each paused task's parked jobs.
local sample, tenant = tonumber(ARGV[6]), ARGV[7]
local paused, parked_prefix = ARGV[8], ARGV[9]
local out = {}

local function count(state, size, ids)
  local per, jobs = {}, 0
  for _, id in ipairs(ids) do
    local json = redis.call('HGET', job_key(id), 'json')
    if json then
      jobs = jobs + 1
      local task = task_of(json)
      if task and tenant ~= '' then
        -- Only the tenant needs the whole JSON decoded; the payload may hold a "tenantId" of its own.
        local ok, decoded = pcall(cjson.decode, json)
        if not (ok and type(decoded) == 'table' and decoded.tenantId == tenant) then
          task = nil
        end
      end
      if task then
        per[task] = (per[task] or 0) + 1
      end
    end
  end
  local flat = {}
  for task, n in pairs(per) do
    flat[#flat + 1] = task
    flat[#flat + 1] = n
  end
  out[#out + 1] = { state, size, #ids, jobs, flat }
end

for _, list in ipairs(READY_LISTS) do
  count('ready', redis.call('LLEN', list), redis.call('LRANGE', list, -sample, -1))
end
count('ready', redis.call('ZCOUNT', SCHEDULED, '-inf', NOW), redis.call('ZRANGEBYSCORE', SCHEDULED, '-inf', NOW, 'LIMIT', 0, sample))
count('scheduled', redis.call('ZCOUNT', SCHEDULED, '(' .. NOW, '+inf'), redis.call('ZRANGEBYSCORE', SCHEDULED, '(' .. NOW, '+inf', 'LIMIT', 0, sample))
count('running', redis.call('ZCARD', RUNNING), redis.call('ZRANGE', RUNNING, 0, sample - 1))
count('dead', redis.call('ZCARD', DEAD), redis.call('ZREVRANGE', DEAD, 0, sample - 1))
for _, task in ipairs(redis.call('HKEYS', paused)) do
  local list = parked_prefix .. task
  count('ready', redis.call('LLEN', list), redis.call('LRANGE', list, -sample, -1))
end
return out
