-- enqueue-flow: writes a flow and every one of its steps in one step (docs/redis.md#flows). A step with no
-- parent is stored as enqueue.lua stores a job (ready, or scheduled until its time); the others `waiting`, on no
-- list a claim reads (only in the waiting ZSET, for listings), with `pending` = how many parents must finish.
-- A flow id that exists already writes nothing.
-- ARGV 6 flow id, 7 name ('' for none), 8 kind, 9 tenant ('' for none), 10 created at (ms),
--      11..: groups of nine per step, parents first: id, json, attempts, errors, available_at (ms), max_attempts,
--            pending, children (JSON array of job ids), run ('1': onParentFailure "run", else '')
-- Returns 1 when written, 0 when the flow existed.
local flow_id = ARGV[6]
local fkey = FLOW_PREFIX .. flow_id
if redis.call('EXISTS', fkey) == 1 then
  return 0
end
promote_due(1000)
local seq = redis.call('INCR', FLOWS .. ':seq')
local total = (#ARGV - 10) / 9
redis.call('HSET', fkey, 'name', ARGV[7], 'kind', ARGV[8], 'tenant', ARGV[9], 'created_at', ARGV[10], 'seq', seq,
  'total', total, 'completed', 0, 'dead', 0, 'stored', total)
redis.call('ZADD', FLOWS, seq, flow_id)
local ids = {}
for i = 11, #ARGV, 9 do
  local id, json = ARGV[i], ARGV[i + 1]
  local jkey = job_key(id)
  local priority = priority_in(json)
  redis.call('HSET', jkey, 'json', json, 'attempts', ARGV[i + 2], 'errors', ARGV[i + 3], 'max_attempts', ARGV[i + 5],
    'flow', flow_id)
  remember_priority(jkey, priority)
  if ARGV[i + 7] ~= '[]' then
    redis.call('HSET', jkey, 'children', ARGV[i + 7])
  end
  if ARGV[i + 8] == '1' then
    redis.call('HSET', jkey, 'run', '1')
  end
  local pending = tonumber(ARGV[i + 6])
  if pending > 0 then
    redis.call('HSET', jkey, 'state', 'waiting', 'pending', pending, 'available_at', ARGV[i + 4])
    redis.call('ZADD', WAITING, ARGV[i + 4], id)
  else
    make_ready(jkey, id, tonumber(ARGV[i + 4]), false, priority)
  end
  ids[#ids + 1] = id
  -- RPUSH in slices: Lua's unpack takes a few thousand values at most.
  if #ids == 1000 then
    redis.call('RPUSH', fkey .. ':steps', unpack(ids))
    ids = {}
  end
end
if #ids > 0 then
  redis.call('RPUSH', fkey .. ':steps', unpack(ids))
end
return 1
