-- resume: a paused task runs again. Its name leaves the paused set and the jobs the claim parked meanwhile go
-- back to the claiming end of their priority's ready list, oldest claimed first and ahead of jobs enqueued since
-- (they waited longer). The push wakes blocked waiters.
-- ARGV 6 paused HASH, 7 the task's parked LIST, 8 task
-- Returns { 1 if the task was paused else 0, jobs moved back }.
local paused, parked, task = ARGV[6], ARGV[7], ARGV[8]
local was = redis.call('HDEL', paused, task)
local moved = 0
-- Newest first onto the right end: the oldest parked job ends up rightmost, the next one claimed.
local id = redis.call('LPOP', parked)
while id do
  push_ready(id, priority_of(job_key(id)), true)
  moved = moved + 1
  id = redis.call('LPOP', parked)
end
return { was, moved }
