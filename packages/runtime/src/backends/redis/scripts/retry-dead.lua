-- retry-dead: requeues dead letters with attempts reset (the error history is kept).
-- ARGV 6 mode ("ids" | "all"), 7 batch size (all), 8.. ids (ids).
-- Returns { retried, missing }; with "all", the caller repeats until fewer than a batch come back.
local retried, missing = {}, {}
local ids = {}
if ARGV[6] == 'all' then
  ids = redis.call('ZRANGE', DEAD, 0, tonumber(ARGV[7]) - 1)
else
  for i = 8, #ARGV do
    ids[#ids + 1] = ARGV[i]
  end
end
for _, id in ipairs(ids) do
  local jkey = job_key(id)
  if redis.call('ZSCORE', DEAD, id) and redis.call('HGET', jkey, 'state') == 'dead' then
    redis.call('ZREM', DEAD, id)
    redis.call('HDEL', jkey, 'died_at')
    redis.call('HSET', jkey, 'attempts', 0)
    make_ready(jkey, id, NOW, false)
    retried[#retried + 1] = id
  else
    -- Not a dead letter; an entry of the dead set without its job is dropped so "all" always makes progress.
    if redis.call('ZSCORE', DEAD, id) then
      redis.call('ZREM', DEAD, id)
    end
    missing[#missing + 1] = id
  end
end
return { retried, missing }
