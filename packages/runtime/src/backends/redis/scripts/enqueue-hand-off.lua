-- enqueue-hand-off: enqueue.lua for a batch written next to idle workers of the calling process. A job the
-- caller marked for a worker is stored already claimed by it, as claim.lua would have left it (attempt counted,
-- leased, owner set, first in the worker's processing list), and the caller hands it over in memory: one round
-- trip instead of a push, the worker's wake-up and its claim (docs/redis.md#in-process-hand-off).
-- A marked job is stored ready instead when its task is paused, or when a ready list is not empty (jobs
-- already waiting are claimed first, whatever their priority: the hand-off never overtakes them); the caller then
-- frees its slot.
-- ARGV 6 worker heartbeat TTL (ms), 7 paused HASH,
--      8..: groups of eight per job: id, json, attempts, errors, available_at (ms), max_attempts,
--           worker id ('' = store ready), lease (ms)
-- Returns { inserted, handed }: the ids written now, and the positions (1-based) in the batch of the jobs
-- stored claimed (positions, not ids: a batch may name an id twice, and only its first copy is stored).
promote_due(1000)
local ttl_ms, paused = tonumber(ARGV[6]), ARGV[7]
local open = not any_ready()
local any_paused = redis.call('HLEN', paused) > 0
local inserted, handed = {}, {}
local beaten = {}
local i = 8
while i + 7 <= #ARGV do
  local id, json = ARGV[i], ARGV[i + 1]
  local jkey = job_key(id)
  if redis.call('EXISTS', jkey) == 0 then
    local attempts = tonumber(ARGV[i + 2])
    local worker = ARGV[i + 6]
    local priority = priority_in(json)
    local take = open and worker ~= '' and not (any_paused and redis.call('HEXISTS', paused, task_of(json) or '') == 1)
    if take then
      local deadline = NOW + tonumber(ARGV[i + 7])
      redis.call('HSET', jkey, 'json', json, 'attempts', attempts + 1, 'errors', ARGV[i + 3], 'max_attempts', ARGV[i + 5],
        'state', 'running', 'available_at', ARGV[i + 4], 'owner', worker, 'lease', deadline)
      remember_priority(jkey, priority)
      redis.call('ZADD', RUNNING, deadline, id)
      redis.call('LPUSH', PROCESSING_PREFIX .. worker, id)
      if not beaten[worker] then
        heartbeat(worker, ttl_ms)
        beaten[worker] = true
      end
      handed[#handed + 1] = (i - 8) / 8 + 1
    else
      redis.call('HSET', jkey, 'json', json, 'attempts', attempts, 'errors', ARGV[i + 3], 'max_attempts', ARGV[i + 5])
      remember_priority(jkey, priority)
      make_ready(jkey, id, tonumber(ARGV[i + 4]), false, priority)
    end
    inserted[#inserted + 1] = id
  end
  i = i + 8
end
return { inserted, handed }
