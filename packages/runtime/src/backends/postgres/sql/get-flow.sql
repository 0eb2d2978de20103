-- One flow with its steps (getFlow): the flow's row, then one row per step (its job's state, attempts, result or
-- last error, and when it finished), found through the flow's index.
-- params: $1 queue, $2 flow id
-- result: the flow's columns on every row (none when there is no such flow), and per step: job_id, task, state,
--         flow (the step's JobFlow), attempts, result, has_result, last_error, finished_at, died_at, last_run (its
--         last attempt's record: core/job-life.ts)
-- index:  jfast_flows_pkey, jfast_jobs_flow_idx
SELECT f.id, f.name, f.kind, f.tenant_id, f.created_at, f.finished_at, f.total, f.completed, f.dead, f.cancelled,
       j.id AS job_id, j.task, j.state, j.flow, j.attempts, j.result, j.result IS NOT NULL AS has_result,
       j.errors->-1 AS last_error, j.finished_at AS step_finished_at, j.died_at, j.runs->-1 AS last_run
FROM jfast_flows AS f
LEFT JOIN jfast_jobs AS j ON j.flow_id = f.id AND j.queue = f.queue
WHERE f.id = $2 AND f.queue = $1
