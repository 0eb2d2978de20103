-- Depths per task for the admin's queues view, optionally of one tenant's jobs. Live jobs are counted inside
-- their partial indexes (each branch repeats its index's predicate so the planner can use it); finished rows
-- are never visited. Dead letters come from jfast_task_counters (kept by the trigger of 0009) without a tenant;
-- with one, from the newest $3 dead rows only (the dead index read backwards, then filtered), and `dead_more`
-- says whether older dead letters were left uncounted.
-- params: $1 queue, $2 tenant id (text or null), $3 dead rows read at most for a tenant (integer)
-- result: rows { task, ready, scheduled, running, dead } (bigint) and one row with task null carrying
--         dead_more (boolean)
-- index:  jfast_jobs_ready_idx, jfast_jobs_lease_idx, jfast_task_counters_pkey, jfast_jobs_dead_idx (tenant)
WITH ready AS (
  SELECT task,
         count(*) FILTER (WHERE available_at <= now()) AS ready,
         count(*) FILTER (WHERE available_at > now()) AS scheduled
  FROM jfast_jobs
  WHERE queue = $1 AND state = 'ready' AND ($2::text IS NULL OR tenant_id = $2::text)
  GROUP BY task
),
running AS (
  SELECT task, count(*) AS running
  FROM jfast_jobs
  WHERE queue = $1 AND state = 'running' AND ($2::text IS NULL OR tenant_id = $2::text)
  GROUP BY task
),
newest_dead AS (
  SELECT task, tenant_id
  FROM jfast_jobs
  WHERE queue = $1 AND state = 'dead' AND $2::text IS NOT NULL
  ORDER BY died_at DESC, seq DESC
  LIMIT $3
),
dead AS (
  SELECT task, dead FROM jfast_task_counters WHERE queue = $1 AND dead > 0 AND $2::text IS NULL
  UNION ALL
  SELECT task, count(*) FROM newest_dead WHERE tenant_id = $2::text GROUP BY task
)
SELECT coalesce(r.task, n.task, d.task) AS task,
       coalesce(r.ready, 0) AS ready,
       coalesce(r.scheduled, 0) AS scheduled,
       coalesce(n.running, 0) AS running,
       coalesce(d.dead, 0) AS dead,
       NULL::boolean AS dead_more
FROM ready AS r
FULL JOIN running AS n ON n.task = r.task
FULL JOIN dead AS d ON d.task = coalesce(r.task, n.task)
UNION ALL
SELECT NULL, 0, 0, 0, 0, (SELECT count(*) FROM newest_dead) >= $3
