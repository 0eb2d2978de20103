-- Heartbeat: pushes the lease of the jobs this worker still runs. A job whose lease was already taken
-- over by another worker is not touched (locked_by no longer matches).
-- params: $1 job ids text[], $2 worker id, $3 lease in ms
-- result: none
-- index:  jfast_jobs_pkey
UPDATE jfast_jobs
SET locked_until = now() + $3::double precision * interval '1 millisecond'
WHERE id = ANY($1::text[]) AND locked_by = $2 AND state = 'running'
