-- release: graceful shutdown. Puts the worker's running jobs back on the ready list at once and gives their
-- attempt back (the handler was cancelled by us, not failed). ARGV 6 worker id, 7.. job ids.
-- Returns how many were released.
local worker = ARGV[6]
local n = 0
for i = 7, #ARGV do
  local id = ARGV[i]
  local jkey = job_key(id)
  if owned_by(jkey, worker) then
    detach(jkey, id)
    local attempts = tonumber(redis.call('HGET', jkey, 'attempts')) or 0
    redis.call('HSET', jkey, 'attempts', math.max(0, attempts - 1))
    make_ready(jkey, id, NOW, false)
    n = n + 1
  end
end
return n
