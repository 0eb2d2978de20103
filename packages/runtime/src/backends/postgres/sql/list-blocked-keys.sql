-- The keys a dead job blocks (docs/flow-control.md#order-per-key): per task with orderedBy and onDead "block", each
-- key with a dead job, its oldest dead job and how many jobs wait behind it. For the admin API; never on a claim's path.
-- params: $1 queue, $2 limit
-- result: rows { task, key, job_id, died_at (epoch ms), waiting }, oldest death first
-- index:  jfast_jobs_limit_key_dead_idx; jfast_jobs_limit_key_order_idx for the count
SELECT d.task, d.limit_key AS key, d.id AS job_id, date_part('epoch', d.died_at) * 1000 AS died_at,
       (SELECT count(*) FROM jfast_jobs AS w
        WHERE w.queue = $1 AND w.task = d.task AND w.limit_key = d.limit_key AND w.phase = 'open') AS waiting
FROM jfast_task_limits AS l
CROSS JOIN LATERAL (
  SELECT DISTINCT ON (j.limit_key) j.task, j.limit_key, j.id, j.died_at
  FROM jfast_jobs AS j
  WHERE j.queue = $1 AND j.task = l.task AND j.phase = 'dead' AND j.limit_key IS NOT NULL AND strpos(j.limit_key, chr(1)) = 0
  ORDER BY j.limit_key, j.died_at
) AS d
WHERE l.queue = $1 AND l.ordered AND l.on_dead = 'block'
ORDER BY d.died_at
LIMIT $2
