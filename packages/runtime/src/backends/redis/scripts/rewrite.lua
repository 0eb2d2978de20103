-- rewrite: replaces the stored JSON and errors of a waiting job (a flow step waiting for its parents too) or dead
-- letter if they are unchanged since they were read (jfast keys rotate); a job claimed or retried in between is
-- left as it is.
-- ARGV 6 job id, 7 json read, 8 errors read ('' when absent), 9 new json, 10 new errors ('' to leave them).
-- Returns 1 when rewritten, else 0.
local jkey = job_key(ARGV[6])
local f = redis.call('HMGET', jkey, 'state', 'json', 'errors')
if (f[1] ~= 'ready' and f[1] ~= 'waiting' and f[1] ~= 'dead') or f[2] ~= ARGV[7] or (f[3] or '') ~= ARGV[8] then
  return 0
end
redis.call('HSET', jkey, 'json', ARGV[9])
if ARGV[10] ~= '' then
  redis.call('HSET', jkey, 'errors', ARGV[10])
end
return 1
