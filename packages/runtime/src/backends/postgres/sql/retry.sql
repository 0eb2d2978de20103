-- Records a failed attempt and makes the job claimable again at its backoff time; wakes listening
-- workers so an idle one re-arms its timer for that time.
-- params: $1 job id, $2 worker id, $3 the attempt's error (jsonb), $4 next available_at (timestamptz),
--         $5 notification channel, $6 the attempt's record (jsonb, NULL: none; appended to runs, core/job-life.ts)
-- result: one row { id } if this worker still owned the job, else none
-- index:  jfast_jobs_pkey
-- A fair task's job (fair_turn set) waits for its key's next turn, placed when it comes due (fair-place.sql).
WITH retried AS (
  UPDATE jfast_jobs
  SET state = 'ready', available_at = $4::timestamptz, locked_by = NULL, locked_until = NULL,
      errors = errors || jsonb_build_array($3::jsonb),
      runs = CASE WHEN $6::jsonb IS NULL THEN runs ELSE coalesce(runs, '[]'::jsonb) || $6::jsonb END, progress = NULL,
      fair_turn = CASE WHEN fair_turn IS NOT NULL THEN 'Infinity'::double precision END
  WHERE id = $1 AND locked_by = $2 AND state = 'running'
  RETURNING id
)
SELECT id, pg_notify($5, '') AS notified FROM retried
