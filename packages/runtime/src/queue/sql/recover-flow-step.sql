-- A flow step's message came back from the broker (FlowStore.recover): the step's state and job, and its children
-- made ready and not published (its outcome committed, its process died before publishing them), taken for $2 ms.
-- params: $1 job id, $2 publish lease ms
-- result: { state, job, child } per child taken; one row with child null when none; none when no such step
-- index:  jfast_flow_steps_pkey
WITH step AS (
  SELECT state, job, children FROM jfast_flow_steps WHERE job_id = $1
),
taken AS (
  UPDATE jfast_flow_steps
  SET publish_after = now() + $2::double precision * interval '1 millisecond'
  WHERE job_id = ANY ((SELECT children FROM step)::text[]) AND state = 'ready' AND NOT published
  RETURNING job
)
SELECT step.state, step.job, taken.job AS child FROM step LEFT JOIN taken ON true
