-- discard-dead: deletes dead letters for good. Same arguments and result shape as retry-dead.
return for_each_dead(function(jkey, _id)
  forget_job(jkey)
end)
