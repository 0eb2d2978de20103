-- Records the final error and moves the job to dead letters (died_at orders them). The dead counter is
-- kept by the trigger on jfast_jobs.
-- params: $1 job id, $2 worker id, $3 the final error (jsonb), $4 the attempt's record (jsonb, NULL: none)
-- result: one row { id } if this worker still owned the job, else none
-- index:  jfast_jobs_pkey
UPDATE jfast_jobs
SET state = 'dead', died_at = now(), locked_by = NULL, locked_until = NULL,
    errors = errors || jsonb_build_array($3::jsonb),
    runs = CASE WHEN $4::jsonb IS NULL THEN runs ELSE coalesce(runs, '[]'::jsonb) || $4::jsonb END, progress = NULL
WHERE id = $1 AND locked_by = $2 AND state = 'running'
RETURNING id
