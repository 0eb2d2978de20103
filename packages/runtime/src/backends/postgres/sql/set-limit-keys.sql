-- Stores the per-key concurrency keys of jobs just inserted (docs/flow-control.md#per-key-concurrency), in the
-- transaction of their insert, so no claim ever sees one of them without its key. Only a batch with a keyed job
-- runs it: plain enqueues never do. A job of a fair task (fairness alone: claim-fair.sql) waits for its turn
-- ('Infinity'): fair-place.sql, the enqueue's next statement, places the due ones; the claim places the others when
-- they come due.
-- params: $1 queue, $2 ids text[], $3 keys text[]
-- result: one row { fair, task } per job keyed; fair is its id when it is a fair task's job (to place), else NULL
-- index:  jfast_jobs_pkey; jfast_task_limits_pkey
UPDATE jfast_jobs AS j
SET limit_key = k.limit_key,
    fair_turn = CASE WHEN EXISTS (
      SELECT 1 FROM jfast_task_limits AS l
      WHERE l.queue = $1 AND l.task = j.task AND l.fair AND NOT l.per_key AND l.on_dead IS NULL AND l.key_rate_max IS NULL
    ) THEN 'Infinity'::double precision END
FROM unnest($2::text[], $3::text[]) AS k(id, limit_key)
WHERE j.id = k.id AND j.queue = $1 AND j.limit_key IS NULL
RETURNING CASE WHEN j.fair_turn IS NOT NULL THEN j.id END AS fair, j.task
