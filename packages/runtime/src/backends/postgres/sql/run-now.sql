-- Makes a waiting job (ready, or scheduled: delayed, backing off, snoozed) due now; one already due keeps its
-- place. Wakes the workers as an enqueue does. Any other state is not touched; get-job.sql then tells it.
-- params: $1 queue, $2 job id, $3 notification channel
-- result: one row { id } when changed, else none
-- index:  jfast_jobs_pkey
WITH moved AS (
  UPDATE jfast_jobs SET available_at = least(available_at, now())
  WHERE id = $2 AND queue = $1 AND state = 'ready'
  RETURNING id
)
SELECT id, (SELECT pg_notify($3, '')) AS notified FROM moved
