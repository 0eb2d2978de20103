-- The pruner (docs/flow-control.md#pruning-per-key-state): up to $2 keys' rate windows (jfast_key_starts) of keys
-- with no open job whose last start is older than the task's per-key window (or whose task has no per-key rate
-- limit any more): nothing in them could hold a job back. A row a claim holds now is skipped, never waited for.
-- params: $1 queue, $2 how many at most
-- result: one row { deleted }
-- index:  jfast_key_starts_pkey; jfast_task_limits_pkey; jfast_jobs_limit_key_order_idx (one probe per key)
WITH gone AS (
  DELETE FROM jfast_key_starts AS s
  WHERE (s.queue, s.task, s.limit_key) IN (
    SELECT c.queue, c.task, c.limit_key
    FROM jfast_key_starts AS c
    LEFT JOIN jfast_task_limits AS l ON l.queue = c.queue AND l.task = c.task
    WHERE c.queue = $1
      AND (
        l.key_rate_per_ms IS NULL
        OR coalesce(c.starts[array_upper(c.starts, 1)], '-infinity') <= statement_timestamp() - l.key_rate_per_ms * interval '1 millisecond'
      )
      AND NOT EXISTS (
        SELECT 1 FROM jfast_jobs AS o
        WHERE o.queue = $1 AND o.task = c.task AND o.limit_key = c.limit_key AND o.phase = 'open'
      )
    ORDER BY c.task, c.limit_key
    LIMIT $2
    FOR UPDATE OF c SKIP LOCKED
  )
  RETURNING 1
)
SELECT count(*) AS deleted FROM gone
