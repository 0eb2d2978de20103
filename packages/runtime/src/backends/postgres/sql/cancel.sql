-- Cancels a waiting (a flow's step), ready (due or scheduled) or running job: its state becomes 'cancelled', which takes it out of the
-- open index, so no claim reads it again and no outcome its worker writes later matches it (they all require
-- state = 'running'). A running job keeps locked_by: that worker's next heartbeat (extend-leases.sql) finds it
-- and aborts the handler. A job in another state is not touched; get-job.sql then tells the caller its state.
-- params: $1 queue, $2 job id
-- result: one row { id } when cancelled, else none
-- index:  jfast_jobs_pkey
UPDATE jfast_jobs
SET state = 'cancelled', finished_at = now(), locked_until = NULL,
    locked_by = CASE WHEN state = 'running' THEN locked_by END
WHERE id = $2 AND queue = $1 AND state IN ('waiting', 'ready', 'running')
RETURNING id
