-- Records the final error and moves the job to dead letters (died_at orders them). The dead counter is
-- kept by the trigger on jfast_jobs.
-- params: $1 job id, $2 worker id, $3 the final error (jsonb)
-- result: one row { id } if this worker still owned the job, else none
-- index:  jfast_jobs_pkey
UPDATE jfast_jobs
SET state = 'dead', died_at = now(), locked_by = NULL, locked_until = NULL,
    errors = errors || jsonb_build_array($3::jsonb)
WHERE id = $1 AND locked_by = $2 AND state = 'running'
RETURNING id
