-- Declares the queue's task limits at start (docs/tasks.md#limits): one row per limited task, the rows of tasks
-- no longer limited deleted. A row whose limits did not change is left as it is (its recent starts kept).
-- params: $1 queue, $2 tasks text[], $3 concurrency integer[] (NULL: none), $4 rate max integer[] (NULL: none),
--         $5 rate window ms bigint[] (NULL with $4), $6 per key boolean[] (concurrency per job key,
--         docs/flow-control.md#per-key-concurrency), $7 fair boolean[], $8 weights jsonb[] (NULL: every key weighs 1),
--         $9 per-key rate max integer[] (NULL: none), $10 its window ms bigint[], $11 on dead text[] (NULL: not
--         ordered; 'block' or 'skip': the task has orderedBy)
-- result: none
-- index:  jfast_task_limits_pkey
WITH gone AS (
  DELETE FROM jfast_task_limits WHERE queue = $1 AND task <> ALL($2::text[])
)
INSERT INTO jfast_task_limits AS l (queue, task, concurrency, rate_max, rate_per_ms, per_key, fair, weights, key_rate_max, key_rate_per_ms, ordered, on_dead)
SELECT $1, d.task, d.concurrency, d.rate_max, d.rate_per_ms, coalesce(d.per_key, false), coalesce(d.fair, false), d.weights,
       d.key_rate_max, d.key_rate_per_ms, d.on_dead IS NOT NULL, d.on_dead
FROM unnest($2::text[], $3::integer[], $4::integer[], $5::bigint[], $6::boolean[], $7::boolean[], $8::jsonb[], $9::integer[], $10::bigint[], $11::text[])
  AS d(task, concurrency, rate_max, rate_per_ms, per_key, fair, weights, key_rate_max, key_rate_per_ms, on_dead)
ON CONFLICT (queue, task) DO UPDATE
SET concurrency = excluded.concurrency, rate_max = excluded.rate_max, rate_per_ms = excluded.rate_per_ms, per_key = excluded.per_key,
    fair = excluded.fair, weights = excluded.weights, key_rate_max = excluded.key_rate_max, key_rate_per_ms = excluded.key_rate_per_ms,
    ordered = excluded.ordered, on_dead = excluded.on_dead
WHERE (l.concurrency, l.rate_max, l.rate_per_ms, l.per_key, l.fair, l.weights::text, l.key_rate_max, l.key_rate_per_ms, l.ordered, l.on_dead)
  IS DISTINCT FROM (excluded.concurrency, excluded.rate_max, excluded.rate_per_ms, excluded.per_key, excluded.fair, excluded.weights::text,
                    excluded.key_rate_max, excluded.key_rate_per_ms, excluded.ordered, excluded.on_dead)
