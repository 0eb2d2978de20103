-- Graceful shutdown: puts this worker's running jobs back at once and gives their attempt back (the
-- handler was cancelled by us, not failed by itself); wakes listening workers to take them. A paused task's
-- jobs handed back by a worker become claimable at $4 instead of now.
-- params: $1 job ids text[], $2 worker id, $3 notification channel, $4 available at (timestamptz or null: now)
-- result: one row { id } per job released
-- index:  jfast_jobs_pkey
-- A fair task's job handed back for later waits for a new turn, placed when it comes due (fair-place.sql); one handed
-- back for now keeps its turn.
WITH released AS (
  UPDATE jfast_jobs
  SET state = 'ready', attempts = greatest(attempts - 1, 0), available_at = coalesce($4::timestamptz, now()),
      locked_by = NULL, locked_until = NULL,
      fair_turn = CASE WHEN fair_turn IS NOT NULL AND $4::timestamptz > now() THEN 'Infinity'::double precision ELSE fair_turn END
  WHERE id = ANY($1::text[]) AND locked_by = $2 AND state = 'running'
  RETURNING id
)
SELECT id, (SELECT pg_notify($3, '')) AS notified FROM released
