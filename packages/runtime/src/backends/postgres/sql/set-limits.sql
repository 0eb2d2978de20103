-- Declares the queue's task limits at start (docs/tasks.md#limits): one row per limited task, the rows of tasks
-- no longer limited deleted. A row whose limits did not change is left as it is (its recent starts kept).
-- params: $1 queue, $2 tasks text[], $3 concurrency integer[] (NULL: none), $4 rate max integer[] (NULL: none),
--         $5 rate window ms bigint[] (NULL with $4)
-- result: none
-- index:  jfast_task_limits_pkey
WITH gone AS (
  DELETE FROM jfast_task_limits WHERE queue = $1 AND task <> ALL($2::text[])
)
INSERT INTO jfast_task_limits AS l (queue, task, concurrency, rate_max, rate_per_ms)
SELECT $1, d.task, d.concurrency, d.rate_max, d.rate_per_ms
FROM unnest($2::text[], $3::integer[], $4::integer[], $5::bigint[]) AS d(task, concurrency, rate_max, rate_per_ms)
ON CONFLICT (queue, task) DO UPDATE
SET concurrency = excluded.concurrency, rate_max = excluded.rate_max, rate_per_ms = excluded.rate_per_ms
WHERE (l.concurrency, l.rate_max, l.rate_per_ms) IS DISTINCT FROM (excluded.concurrency, excluded.rate_max, excluded.rate_per_ms)
