-- Deletes a waiting job (ready or scheduled) for good. A running, finished or dead job is not touched (dead
-- letters are discarded through discard-dead.sql); get-job.sql then tells its state.
-- params: $1 queue, $2 job id
-- result: one row { id } when deleted, else none
-- index:  jfast_jobs_pkey
DELETE FROM jfast_jobs
WHERE id = $2 AND queue = $1 AND state = 'ready'
RETURNING id
