-- Cancels a flow of a broker queue (FlowStore.cancel): every step not finished becomes 'cancelled' and is recorded
-- as a cancelled job (jfast_cancelled_jobs, 0017), so its message is dropped when it is delivered and a running
-- one's worker learns it at its next heartbeat, as a cancelled job's does. Then the flow's row is marked. The steps
-- are locked in id order first, as complete-flow-step.sql locks children, then the flow's row.
-- params: $1 queue, $2 flow id
-- result: one row { found, cancelled: the cancelled steps' ids text[] or null }; found is false when no such flow
-- index:  jfast_flow_steps_flow_idx, jfast_flow_steps_pkey, jfast_cancelled_jobs_pkey, jfast_flows_pkey
WITH locked AS MATERIALIZED (
  SELECT job_id FROM jfast_flow_steps
  WHERE flow_id = $2 AND queue = $1 AND state IN ('waiting', 'ready')
  ORDER BY job_id
  FOR UPDATE
),
steps AS (
  UPDATE jfast_flow_steps
  SET state = 'cancelled', finished_at = now(), publish_after = NULL
  WHERE job_id = ANY ((SELECT array_agg(job_id) FROM locked)::text[]) AND state IN ('waiting', 'ready')
  RETURNING job_id
),
recorded AS (
  INSERT INTO jfast_cancelled_jobs (queue, id)
  SELECT $1, job_id FROM steps
  ON CONFLICT (queue, id) DO NOTHING
),
flow AS (
  UPDATE jfast_flows
  SET cancelled = true, finished_at = coalesce(finished_at, now())
  WHERE id = $2 AND queue = $1 AND (SELECT count(*) FROM steps) >= 0
  RETURNING id
)
SELECT EXISTS (SELECT 1 FROM flow) AS found, (SELECT array_agg(job_id) FROM steps) AS cancelled
