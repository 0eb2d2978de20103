-- Changes a waiting job's payload, priority or run time (jobs.update), only while it is still ready (due or
-- scheduled): a job claimed, finished or dead meanwhile is not touched; get-job.sql then tells its state. A NULL
-- parameter keeps the column as it is. Wakes the workers as an enqueue does (the job may be due sooner now).
-- params: $1 queue, $2 job id, $3 payload (JSON text) or NULL, $4 priority or NULL, $5 available_at or NULL,
--         $6 notification channel
-- result: one row { id } when changed, else none
-- index:  jfast_jobs_pkey
-- A fair task's job given a new run time waits for a new turn, placed when it comes due (fair-place.sql).
WITH changed AS (
  UPDATE jfast_jobs
  SET payload = coalesce($3::json, payload),
      priority = coalesce($4::smallint, priority),
      available_at = coalesce($5::timestamptz, available_at),
      fair_turn = CASE WHEN fair_turn IS NOT NULL AND $5::timestamptz IS NOT NULL THEN 'Infinity'::double precision ELSE fair_turn END
  WHERE id = $2 AND queue = $1 AND state = 'ready'
  RETURNING id
)
SELECT id, (SELECT pg_notify($6, '')) AS notified FROM changed
