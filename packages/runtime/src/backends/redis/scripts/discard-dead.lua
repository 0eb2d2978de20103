-- discard-dead: deletes dead letters for good. Same arguments and result shape as retry-dead.
local discarded, missing = {}, {}
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
    redis.call('DEL', jkey)
    discarded[#discarded + 1] = id
  else
    -- Not a dead letter; an entry of the dead set without its job is dropped so "all" always makes progress.
    if redis.call('ZSCORE', DEAD, id) then
      redis.call('ZREM', DEAD, id)
    end
    missing[#missing + 1] = id
  end
end
return { discarded, missing }
