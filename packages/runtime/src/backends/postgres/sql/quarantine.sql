-- Moves a job that a claim could not process (the statement failed on its row with a data error) to dead
-- letters with the reason, if it is still claimable. Its payload stays as stored, for an operator to read.
-- params: $1 job id, $2 the reason (jsonb, an attempt error)
-- result: one row { id } if the job was quarantined, else none
-- index:  jfast_jobs_pkey
UPDATE jfast_jobs
SET state = 'dead', died_at = now(), locked_by = NULL, locked_until = NULL,
    errors = (CASE WHEN jsonb_typeof(errors) = 'array' THEN errors ELSE '[]'::jsonb END) || jsonb_build_array($2::jsonb)
WHERE id = $1 AND phase = 'open' AND (state = 'ready' OR locked_until < now() OR locked_until IS NULL)
RETURNING id
