-- complete: handlers returned; settles any number of one worker's jobs in one call (the backend batches
-- completions that arrive while a call is in flight, see core/completion-batcher.ts). Each id is settled
-- exactly as it would be alone: only the current owner may settle a job (a worker whose lease was taken over
-- must not overwrite the new owner's outcome). The job stays as `completed` for the retention period, so an
-- enqueue of the same id stays a no-op and getJob can still show it; older completed jobs are pruned once per
-- call (below). A retention of 0 ([plugin.queue] keep_completed = false) forgets the job at once, but a flow's
-- step only with the whole flow, once every step has completed: its result is read by the steps after it.
-- A flow step's completion is counted here, in the same script, for its flow and its children (step_completed in
-- lib.lua): only a job this call settled counts, so an outcome written twice counts once (docs/redis.md#flows).
-- ARGV 6 worker id, 7 retention (ms), 8 '', 'results' or 'life', 9.. job ids; with 'results' each id is followed by
-- the hash field its result goes in ('result', 'result_omitted', '' for none) and that field's text (core/result.ts);
-- with 'life' by those two and the attempt's record as JSON ('' for none; core/job-life.ts, appended to `runs`).
-- Returns { settled, refused }: the ids settled, and the ids that were not this worker's (left untouched).
-- Per job the owner check (HMGET), the entry in the worker's processing list (LREM, as detach does) and the DEL or
-- HSET; the leases of every settled job go in one ZREM at the end (nothing between reads the running set), and a
-- job deleted outright needs no HDEL of its owner and lease first.
local worker, retention = ARGV[6], tonumber(ARGV[7])
local step = (ARGV[8] == 'life' and 4) or (ARGV[8] == 'results' and 3) or 1
local processing = PROCESSING_PREFIX .. worker
local settled, refused = {}, {}
for i = 9, #ARGV, step do
  local id = ARGV[i]
  local jkey = job_key(id)
  local f = redis.call('HMGET', jkey, 'state', 'owner', 'flow', 'runs')
  if f[1] == 'running' and f[2] == worker then
    redis.call('LREM', processing, -1, id)
    if retention <= 0 and not f[3] then
      redis.call('DEL', jkey)
    else
      redis.call('HDEL', jkey, 'owner', 'lease')
      -- The attempt's record goes in the same HSET as the completion ('life').
      local runs = step == 4 and runs_with(jkey, ARGV[i + 3], f[4]) or nil
      if runs then
        if ARGV[i + 1] ~= '' then
          redis.call('HSET', jkey, 'state', 'completed', 'done_at', NOW, 'runs', runs, ARGV[i + 1], ARGV[i + 2])
        else
          redis.call('HSET', jkey, 'state', 'completed', 'done_at', NOW, 'runs', runs)
        end
      elseif step >= 3 and ARGV[i + 1] ~= '' then
        redis.call('HSET', jkey, 'state', 'completed', 'done_at', NOW, ARGV[i + 1], ARGV[i + 2])
      else
        redis.call('HSET', jkey, 'state', 'completed', 'done_at', NOW)
      end
      redis.call('ZADD', COMPLETED, NOW, id)
      if f[3] and step_completed(jkey, f[3]) and retention <= 0 then
        forget_flow(f[3])
      end
    end
    settled[#settled + 1] = id
  else
    refused[#refused + 1] = id
  end
end
for j = 1, #settled, 1000 do
  redis.call('ZREM', RUNNING, unpack(settled, j, math.min(j + 999, #settled)))
end
-- Up to 100 more expired jobs than this call completed, so pruning keeps pace with completions however large
-- the batches grow.
if retention > 0 and #settled > 0 then
  local expired = redis.call('ZRANGEBYSCORE', COMPLETED, '-inf', NOW - retention, 'LIMIT', 0, 100 + #settled)
  for _, old in ipairs(expired) do
    forget_job(job_key(old))
    redis.call('ZREM', COMPLETED, old)
  end
end
return { settled, refused }
