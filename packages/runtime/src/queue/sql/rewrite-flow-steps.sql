-- Writes rewritten jobs of flow steps (FlowStore.rewriteWaiting): each only if it is still the job that was read
-- and still not in the broker, so a step published or finished meanwhile keeps what it had.
-- params: $1 the steps as JSON [{ id, was: the job as read, job: the job rewritten }]
-- result: rows { job_id } of the steps rewritten
-- index:  jfast_flow_steps_pkey
UPDATE jfast_flow_steps AS s
SET job = r.job
FROM jsonb_to_recordset($1::jsonb) AS r(id text, was jsonb, job jsonb)
WHERE s.job_id = r.id AND s.job = r.was AND s.state IN ('waiting', 'ready') AND NOT s.published
RETURNING s.job_id
