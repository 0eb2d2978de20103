-- complete-spawn: complete.lua for one flow step whose handler added steps to its flow (tools.flow.spawn,
-- docs/flows.md#adding-steps-while-it-runs). The steps are written only when this call completes the job (it is
-- this worker's running job), in the same script as the completion and before it is counted, so a failed attempt
-- adds nothing and a completion written twice adds them once. Each is stored `waiting`, its `pending` already
-- counting the completing step; those after the completing step become its children, counted right after.
-- ARGV 6 worker id, 7 retention (ms), 8 job id, 9 result field ('result', 'result_omitted', '' for none),
--      10 its text, 11..: groups of ten per spawned step, parents first: enqueue-flow.lua's nine, then direct
--      ('1': it runs after the completing step); the last ARGV: the attempt's record (JSON, '' for none)
-- Returns 1 when completed, 0 when the job was not this worker's (nothing written).
local worker, retention, id = ARGV[6], tonumber(ARGV[7]), ARGV[8]
local jkey = job_key(id)
local f = redis.call('HMGET', jkey, 'state', 'owner', 'flow')
if f[1] ~= 'running' or f[2] ~= worker then
  return 0
end
local flow_id = f[3]
detach(jkey, id)
redis.call('HSET', jkey, 'state', 'completed', 'done_at', NOW)
append_run(jkey, ARGV[#ARGV])
if ARGV[9] ~= '' then
  redis.call('HSET', jkey, ARGV[9], ARGV[10])
end
redis.call('ZADD', COMPLETED, NOW, id)
if not flow_id then
  return 1
end
local fkey = FLOW_PREFIX .. flow_id
local added, direct = {}, {}
for i = 11, #ARGV - 1, 10 do
  local sid, json = ARGV[i], ARGV[i + 1]
  local skey = job_key(sid)
  if redis.call('EXISTS', skey) == 0 then
    redis.call('HSET', skey, 'json', json, 'attempts', ARGV[i + 2], 'errors', ARGV[i + 3], 'max_attempts', ARGV[i + 5],
      'flow', flow_id, 'state', 'waiting', 'pending', ARGV[i + 6], 'available_at', ARGV[i + 4])
    remember_priority(skey, priority_in(json))
    if ARGV[i + 7] ~= '[]' then
      redis.call('HSET', skey, 'children', ARGV[i + 7])
    end
    if ARGV[i + 8] == '1' then
      redis.call('HSET', skey, 'run', '1')
    end
    redis.call('ZADD', WAITING, ARGV[i + 4], sid)
    added[#added + 1] = sid
    if ARGV[i + 9] == '1' then
      direct[#direct + 1] = sid
    end
  end
end
if #added > 0 then
  for i = 1, #added, 1000 do
    redis.call('RPUSH', fkey .. ':steps', unpack(added, i, math.min(i + 999, #added)))
  end
  redis.call('HINCRBY', fkey, 'total', #added)
  redis.call('HINCRBY', fkey, 'stored', #added)
end
if #direct > 0 then
  local children = redis.call('HGET', jkey, 'children')
  local list = children and cjson.decode(children) or {}
  for _, sid in ipairs(direct) do
    list[#list + 1] = sid
  end
  redis.call('HSET', jkey, 'children', cjson.encode(list))
end
if step_completed(jkey, flow_id) and retention <= 0 then
  forget_flow(flow_id)
end
return 1
