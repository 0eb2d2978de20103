-- enqueue-unique: enqueue.lua for a batch with unique jobs (docs/tasks.md#unique-jobs). A unique job is stored
-- only when no other job holds its key; else the holder's id is returned for it. Atomic like every script, so of
-- concurrent enqueues of one key exactly one job is stored.
-- A key is a STRING "<how>|<holder id>": how is "p" for a key held for a period (the STRING expires with it, SET
-- PX), else the states the holder holds it in ("ready,running"); the holder's hash tells its state now, so a key
-- is free again as soon as its holder leaves them (or its hash expires) without any other script releasing it.
-- ARGV 6: unique key prefix; 7..: groups of nine per job: id, json, attempts, errors (JSON array text),
--   available_at (ms), max_attempts, scoped unique key ('' for a plain job), period ms (0: held by state), states
--   (comma-separated)
-- Returns { ids written now, { id, holder id, ... } of the duplicates }.
promote_due(1000)
local UNIQUE_PREFIX = ARGV[6]

local function holder_of(ukey)
  local value = redis.call('GET', ukey)
  if not value then
    return nil
  end
  local bar = string.find(value, '|', 1, true)
  local how, holder = string.sub(value, 1, bar - 1), string.sub(value, bar + 1)
  if how == 'p' then
    return holder
  end
  local state = redis.call('HGET', job_key(holder), 'state')
  if state and string.find(',' .. how .. ',', ',' .. state .. ',', 1, true) then
    return holder
  end
  return nil
end

local inserted, duplicates = {}, {}
local i = 7
while i + 8 <= #ARGV do
  local id = ARGV[i]
  local jkey = job_key(id)
  if redis.call('EXISTS', jkey) == 0 then
    local holder = nil
    local unique = ARGV[i + 6]
    if unique ~= '' then
      local ukey = UNIQUE_PREFIX .. unique
      holder = holder_of(ukey)
      if not holder then
        local period = tonumber(ARGV[i + 7])
        if period > 0 then
          redis.call('SET', ukey, 'p|' .. id, 'PX', period)
        else
          redis.call('SET', ukey, ARGV[i + 8] .. '|' .. id)
        end
      end
    end
    if holder then
      duplicates[#duplicates + 1] = id
      duplicates[#duplicates + 1] = holder
    else
      local priority = priority_in(ARGV[i + 1])
      store_job(jkey, ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 5], {})
      remember_priority(jkey, priority)
      make_ready(jkey, id, tonumber(ARGV[i + 4]), false, priority)
      inserted[#inserted + 1] = id
    end
  end
  i = i + 9
end
return { inserted, duplicates }
