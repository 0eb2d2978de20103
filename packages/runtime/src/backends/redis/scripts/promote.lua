-- promote: moves due delayed jobs and retries to the ready list, then says how long an idle worker may block.
-- No extra ARGV. Returns { 1 when a ready list holds a job else 0, earliest due time or -1, earliest lease
-- deadline or -1 } (ms).
promote_due(1000)
local due = redis.call('ZRANGE', SCHEDULED, 0, 0, 'WITHSCORES')
local lease = redis.call('ZRANGE', RUNNING, 0, 0, 'WITHSCORES')
return { any_ready() and 1 or 0, due[2] or '-1', lease[2] or '-1' }
