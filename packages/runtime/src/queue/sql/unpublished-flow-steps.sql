-- A page of a broker queue's flow steps whose job is still in the database, not in the broker: waiting for their
-- parents, or ready and not yet published (FlowStore.rewriteWaiting, for jfast keys rotate).
-- params: $1 queue, $2 after this job id ('' from the first), $3 limit
-- result: rows { job_id, job }, by job id
-- index:  jfast_flow_steps_pkey
SELECT job_id, job FROM jfast_flow_steps
WHERE queue = $1 AND job_id > $2 AND state IN ('waiting', 'ready') AND NOT published
ORDER BY job_id
LIMIT $3
