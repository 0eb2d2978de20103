-- A flow of a broker queue with its steps (FlowStore.get).
-- params: $1 queue, $2 flow id
-- result: one row per step (flow columns, step columns); one row with job_id null for a flow without steps; none
--         when no such flow
-- index:  jfast_flows_pkey, jfast_flow_steps_flow_idx
SELECT f.id, f.name, f.kind, f.tenant_id, f.created_at, f.finished_at, f.total, f.completed, f.dead, f.cancelled,
       s.job_id, s.state, s.job, s.result, s.result IS NOT NULL AS has_result, s.finished_at AS step_finished_at,
       s.started_at AS step_started_at, s.duration_ms AS step_duration_ms
FROM jfast_flows AS f
LEFT JOIN jfast_flow_steps AS s ON s.flow_id = f.id
WHERE f.id = $2 AND f.queue = $1
