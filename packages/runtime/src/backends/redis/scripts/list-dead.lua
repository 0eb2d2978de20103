-- list-dead: dead letters, newest death first. ARGV 6 offset, 7 limit.
-- Returns { id, died_at, json, attempts, errors, available_at } each.
local offset, limit = tonumber(ARGV[6]), tonumber(ARGV[7])
local rows = {}
if limit <= 0 then
  return rows
end
local ids = redis.call('ZREVRANGE', DEAD, offset, offset + limit - 1, 'WITHSCORES')
for i = 1, #ids, 2 do
  local f = redis.call('HMGET', job_key(ids[i]), 'json', 'attempts', 'errors', 'available_at')
  rows[#rows + 1] = { ids[i], ids[i + 1], f[1], f[2], f[3], f[4] }
end
return rows
