-- complete: handlers returned; settles any number of one worker's jobs in one call (the backend batches
-- completions that arrive while a call is in flight, see core/completion-batcher.ts). Each id is settled
-- exactly as it would be alone: only the current owner may settle a job (a worker whose lease was taken over
-- must not overwrite the new owner's outcome). The job stays as `completed` for the retention period, so an
-- enqueue of the same id stays a no-op and getJob can still show it; older completed jobs are pruned once per
-- call (below). A retention of 0 ([plugin.queue] keep_completed = false) forgets the job at once.
-- ARGV 6 worker id, 7 retention (ms), 8 '' or 'results', 9.. job ids; with 'results' each id is followed by the
-- hash field its result goes in ('result', 'result_omitted', '' for none) and that field's text (core/result.ts).
-- Returns { settled, refused }: the ids settled, and the ids that were not this worker's (left untouched).
local worker, retention = ARGV[6], tonumber(ARGV[7])
local step = ARGV[8] == 'results' and 3 or 1
local settled, refused = {}, {}
for i = 9, #ARGV, step do
  local id = ARGV[i]
  local jkey = job_key(id)
  if owned_by(jkey, worker) then
    detach(jkey, id)
    if retention <= 0 then
      redis.call('DEL', jkey)
    else
      if step == 3 and ARGV[i + 1] ~= '' then
        redis.call('HSET', jkey, 'state', 'completed', 'done_at', NOW, ARGV[i + 1], ARGV[i + 2])
      else
        redis.call('HSET', jkey, 'state', 'completed', 'done_at', NOW)
      end
      redis.call('ZADD', COMPLETED, NOW, id)
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
    redis.call('DEL', job_key(old))
    redis.call('ZREM', COMPLETED, old)
  end
end
return { settled, refused }
