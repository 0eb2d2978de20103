-- Deletes every dead letter of the queue for good.
-- params: $1 queue
-- result: one row { id } per job deleted
-- index:  jfast_jobs_dead_idx
DELETE FROM jfast_jobs
WHERE queue = $1 AND phase = 'dead'
RETURNING id
