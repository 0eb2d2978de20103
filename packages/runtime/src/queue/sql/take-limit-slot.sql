-- Takes a slot of a limited task for a delivered job (RabbitMQ; docs/tasks.md#limits), after lock-task-limit.sql
-- locked the task's row in this transaction (so this snapshot sees every take committed before). Granted when the
-- slots held under a live lease are fewer than the concurrency and the starts within the window fewer than
-- rate_max: the slot is held for $4 ms and the start remembered. Else nothing is written.
-- params: $1 queue, $2 task, $3 job id, $4 lease in ms
-- result: one row { granted boolean, retry_in_ms: when the rate window lets one more start (null: concurrency) }
-- index:  jfast_task_limits_pkey, jfast_task_slots_pkey
WITH lim AS (
  SELECT concurrency, rate_max, rate_per_ms,
         ARRAY(SELECT t.at FROM unnest(starts) AS t(at) WHERE t.at > statement_timestamp() - rate_per_ms * interval '1 millisecond' ORDER BY t.at) AS recent
  FROM jfast_task_limits WHERE queue = $1 AND task = $2
),
verdict AS (
  SELECT (concurrency IS NULL OR (
            SELECT count(*) FROM jfast_task_slots s
            WHERE s.queue = $1 AND s.task = $2 AND s.until >= now() AND s.job_id <> $3) < concurrency)
         AND (rate_max IS NULL OR cardinality(recent) < rate_max) AS granted,
         CASE WHEN rate_max IS NOT NULL AND cardinality(recent) >= rate_max
              THEN date_part('epoch', recent[cardinality(recent) - rate_max + 1] + rate_per_ms * interval '1 millisecond' - statement_timestamp()) * 1000
         END AS retry_in_ms,
         concurrency, rate_max
  FROM lim
),
slot AS (
  INSERT INTO jfast_task_slots (queue, task, job_id, until)
  SELECT $1, $2, $3, now() + $4::double precision * interval '1 millisecond' FROM verdict WHERE granted AND concurrency IS NOT NULL
  ON CONFLICT (queue, task, job_id) DO UPDATE SET until = excluded.until
),
started AS (
  UPDATE jfast_task_limits AS l SET starts = (SELECT recent FROM lim) || statement_timestamp()
  WHERE l.queue = $1 AND l.task = $2 AND l.rate_max IS NOT NULL AND (SELECT granted FROM verdict)
)
SELECT coalesce((SELECT granted FROM verdict), true) AS granted, (SELECT retry_in_ms FROM verdict) AS retry_in_ms
