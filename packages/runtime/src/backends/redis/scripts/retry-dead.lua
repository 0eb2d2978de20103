-- retry-dead: requeues dead letters with attempts reset (the error history is kept); a flow step's flow runs again.
-- ARGV 6 mode ("ids" | "all"), 7 batch size (all), 8.. ids (ids).
-- Returns { retried, missing }; with "all", the caller repeats until fewer than a batch come back.
return for_each_dead(function(jkey, id)
  redis.call('HDEL', jkey, 'died_at')
  redis.call('HSET', jkey, 'attempts', 0)
  make_ready(jkey, id, NOW, false)
  local flow_id = redis.call('HGET', jkey, 'flow')
  if flow_id then
    step_revived(flow_id)
  end
end)
