-- The deadline sweep (docs/flow-control.md#deadlines): ready jobs that never ran (no attempt spent) and whose deadline
-- has passed end 'expired' with the reason, at most $2 of them, earliest deadline first. A row another transaction
-- holds (a claim taking it this moment) is skipped: the claim then ends it itself. Flow steps have no deadline.
-- params: $1 queue, $2 limit, $3 the error (jsonb; its message is completed here with the deadline)
-- result: one row { expired: count }
-- index:  jfast_jobs_expiring_idx (queue, expires_at) WHERE phase = 'open' AND expires_at IS NOT NULL: only jobs with a
--         deadline are in it, so the sweep reads nothing of a queue without them
WITH due AS (
  SELECT id FROM jfast_jobs
  WHERE queue = $1 AND phase = 'open' AND expires_at IS NOT NULL AND expires_at <= now()
    AND state = 'ready' AND attempts = 0 AND flow_id IS NULL
  ORDER BY expires_at
  LIMIT $2
  FOR UPDATE SKIP LOCKED
),
expired AS (
  UPDATE jfast_jobs AS j
  SET state = 'expired', finished_at = now(),
      errors = j.errors || jsonb_build_array(jsonb_set($3::jsonb, '{message}', to_jsonb(
        'not started before its deadline ' || to_char(j.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
        || '; the sweep for jobs no claim reached ended it without running')))
  FROM due
  WHERE j.id = due.id
  RETURNING j.id
)
SELECT count(*)::integer AS expired FROM expired
