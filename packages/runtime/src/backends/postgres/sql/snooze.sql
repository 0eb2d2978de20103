-- The handler returned snooze(ms): the job is claimable again at $3 with its attempt given back (as release.sql
-- does) and its snooze count raised, unless it has snoozed $4 times already; then nothing changes and the worker
-- dead-letters it (kill.sql). Wakes listening workers so an idle one re-arms its timer for that time.
-- params: $1 job id, $2 worker id, $3 available at (timestamptz), $4 max snoozes (integer), $5 notification channel,
--         $6 the attempt's record (jsonb, NULL: none)
-- result: one row { id } when snoozed; none when the job is not this worker's or has reached $4 snoozes
-- index:  jfast_jobs_pkey
-- A fair task's job (fair_turn set) given a later start waits for a new turn, placed when it comes due (fair-place.sql).
WITH snoozed AS (
  UPDATE jfast_jobs
  SET state = 'ready', attempts = greatest(attempts - 1, 0), snoozes = snoozes + 1, available_at = $3::timestamptz,
      locked_by = NULL, locked_until = NULL,
      runs = CASE WHEN $6::jsonb IS NULL THEN runs ELSE coalesce(runs, '[]'::jsonb) || $6::jsonb END, progress = NULL,
      fair_turn = CASE WHEN fair_turn IS NOT NULL THEN 'Infinity'::double precision END
  WHERE id = $1 AND locked_by = $2 AND state = 'running' AND snoozes < $4
  RETURNING id
)
SELECT id, pg_notify($5, '') AS notified FROM snoozed
