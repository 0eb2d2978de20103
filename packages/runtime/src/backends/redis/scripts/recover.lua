-- recover: returns the jobs left in processing lists under the lease-expiry rule ("worker lost" recorded,
-- reclaimed, or dead when that was the last attempt).
--   mode "stale": every registered worker whose heartbeat key has expired (any live worker runs this)
--   mode "own":   the given worker's own list, then forgets the worker (on shutdown, and when a worker id is
--                 first used by this process, which covers a restart under the same id)
-- ARGV 6 mode, 7 worker id (own) or max workers to inspect (stale), 8 worker-lost error tail.
-- Returns { jobs recovered, workers recovered }.
local mode, lost_tail = ARGV[6], ARGV[8]
if mode == 'own' then
  local worker = ARGV[7]
  local n = recover_list(worker, lost_tail)
  redis.call('DEL', WORKER_PREFIX .. worker)
  redis.call('ZREM', WORKERS, worker)
  return { n, 1 }
end
local jobs, workers = 0, 0
for _, worker in ipairs(redis.call('ZRANGE', WORKERS, 0, tonumber(ARGV[7]) - 1)) do
  if redis.call('EXISTS', WORKER_PREFIX .. worker) == 0 then
    jobs = jobs + recover_list(worker, lost_tail)
    redis.call('ZREM', WORKERS, worker)
    workers = workers + 1
  end
end
return { jobs, workers }
