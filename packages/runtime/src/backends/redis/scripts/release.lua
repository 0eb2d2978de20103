-- release: graceful shutdown. Puts the worker's running jobs back on the ready list at once and gives their
-- attempt back (the handler was cancelled by us, not failed). A paused task's jobs a worker hands back come
-- back at a later time instead (scheduled). ARGV 6 worker id, 7 available at (ms, 0: now), 8.. job ids.
-- Returns how many were released.
local worker = ARGV[6]
local avail = math.max(tonumber(ARGV[7]) or 0, NOW)
local n = 0
for i = 8, #ARGV do
  local id = ARGV[i]
  local jkey = job_key(id)
  if owned_by(jkey, worker) then
    detach(jkey, id)
    local attempts = tonumber(redis.call('HGET', jkey, 'attempts')) or 0
    redis.call('HSET', jkey, 'attempts', math.max(0, attempts - 1))
    make_ready(jkey, id, avail, false)
    n = n + 1
  end
end
return n
