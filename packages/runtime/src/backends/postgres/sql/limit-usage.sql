-- What a limited task uses of its limits now (docs/tasks.md#limits): its jobs holding a slot and running under a
-- live lease, and its starts within the rate window. For the admin's job view; never on a claim's path.
-- params: $1 queue, $2 task
-- result: one row { running, started }
-- index:  jfast_task_slots_pkey, jfast_jobs_pkey, jfast_task_limits_pkey
SELECT
  (SELECT count(*) FROM jfast_task_slots s JOIN jfast_jobs j ON j.id = s.job_id
   WHERE s.queue = $1 AND s.task = $2 AND j.state = 'running' AND j.locked_until >= now()) AS running,
  coalesce((SELECT count(*) FROM jfast_task_limits l, unnest(l.starts) AS t(at)
            WHERE l.queue = $1 AND l.task = $2 AND t.at > now() - l.rate_per_ms * interval '1 millisecond'), 0) AS started
