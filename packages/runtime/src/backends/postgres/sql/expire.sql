-- A worker claimed a job after its deadline (docs/flow-control.md#deadlines): instead of running it, it ends
-- 'expired', which takes it out of the open index as a cancelled job leaves it. The claim's attempt is given back
-- (the job never started), and the error says why. Only while the job is still this worker's.
-- params: $1 queue, $2 job id, $3 worker id, $4 the error (jsonb; its attempt is set to the attempts given back)
-- result: one row { id } when expired, else none
-- index:  jfast_jobs_pkey
UPDATE jfast_jobs
SET state = 'expired', finished_at = now(), locked_by = NULL, locked_until = NULL, attempts = greatest(attempts - 1, 0),
    errors = errors || jsonb_build_array(jsonb_set($4::jsonb, '{attempt}', to_jsonb(greatest(attempts - 1, 0))))
WHERE id = $2 AND queue = $1 AND state = 'running' AND locked_by = $3
RETURNING id
