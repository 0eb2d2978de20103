-- complete: handlers returned; settles any number of one worker's jobs in one call (the backend batches
-- completions that arrive while a call is in flight, see core/completion-batcher.ts). Each id is settled
-- exactly as it would be alone: only the current owner may settle a job (a worker whose lease was taken over
-- must not overwrite the new owner's outcome). The job stays as `completed` for the retention period, so an
-- enqueue of the same id stays a no-op and getJob can still show it; older completed jobs are pruned once per
-- call (below). A retention of 0 ([plugin.queue] keep_completed = false) forgets the job at once, but a flow's
-- step only with the whole flow, once every step has completed: its result is read by the steps after it.
-- A flow step's completion is counted here, in the same script, for its flow and its children (step_completed in
-- lib.lua): only a job this call settled counts, so an outcome written twice counts once (docs/redis.md#flows).
-- ARGV 6 worker id, 7 retention (ms), 8 '' or 'results', 9.. job ids; with 'results' each id is followed by the
-- hash field its result goes in ('result', 'result_omitted', '' for none) and that field's text (core/result.ts).
-- Returns { settled, refused }: the ids settled, and the ids that were not this worker's (left untouched).
local worker, retention = ARGV[6], tonumber(ARGV[7])
local step = ARGV[8] == 'results' and 3 or 1
local settled, refused = {}, {}
for i = 9, #ARGV, step do
  local id = ARGV[i]
  local jkey = job_key(id)
  local f = redis.call('HMGET', jkey, 'state', 'owner', 'flow')
  if f[1] == 'running' and f[2] == worker then
    detach(jkey, id)
    if retention <= 0 and not f[3] then
      redis.call('DEL', jkey)
    else
      if step == 3 and ARGV[i + 1] ~= '' then
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
