-- A flow step of a broker queue as getJob shows it (FlowStore.step).
-- params: $1 job id
-- result: one row { state, job, finished_at }, or none
-- index:  jfast_flow_steps_pkey
SELECT state, job, finished_at FROM jfast_flow_steps WHERE job_id = $1
