-- Heartbeat: pushes the lease of the jobs this worker still runs, and answers which of them were cancelled
-- (cancel.sql keeps locked_by on a running job it cancels), so the worker aborts their handlers. A job whose
-- lease was already taken over by another worker is not touched (locked_by no longer matches). The update runs
-- whether or not the select reads it (a data-modifying WITH always runs once).
-- params: $1 job ids text[], $2 worker id, $3 lease in ms
-- result: one row { id } per cancelled job among $1
-- index:  jfast_jobs_pkey
WITH extended AS (
  UPDATE jfast_jobs
  SET locked_until = now() + $3::double precision * interval '1 millisecond'
  WHERE id = ANY($1::text[]) AND locked_by = $2 AND state = 'running'
)
SELECT id FROM jfast_jobs
WHERE id = ANY($1::text[]) AND locked_by = $2 AND state = 'cancelled'
