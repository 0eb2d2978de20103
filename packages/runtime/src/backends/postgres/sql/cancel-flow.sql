-- Cancels a flow (cancelFlow): every step not finished becomes 'cancelled' as cancel.sql does for one job (a
-- running one keeps locked_by, so its worker's next heartbeat learns it), then the flow's row is marked. The steps
-- are locked in id order first, as complete-flow.sql locks children, then the flow's row.
-- params: $1 queue, $2 flow id
-- result: one row { found, cancelled: the cancelled steps' ids text[] or null }; found is false when no such flow
-- index:  jfast_jobs_flow_idx, jfast_jobs_pkey, jfast_flows_pkey
WITH locked AS MATERIALIZED (
  SELECT id FROM jfast_jobs
  WHERE flow_id = $2 AND queue = $1 AND state IN ('waiting', 'ready', 'running')
  ORDER BY id
  FOR UPDATE
),
steps AS (
  UPDATE jfast_jobs
  SET state = 'cancelled', finished_at = now(), locked_until = NULL,
      locked_by = CASE WHEN state = 'running' THEN locked_by END
  WHERE id = ANY ((SELECT array_agg(id) FROM locked)::text[]) AND state IN ('waiting', 'ready', 'running')
  RETURNING id
),
flow AS (
  UPDATE jfast_flows
  SET cancelled = true, finished_at = coalesce(finished_at, now())
  WHERE id = $2 AND queue = $1 AND (SELECT count(*) FROM steps) >= 0
  RETURNING id
)
SELECT EXISTS (SELECT 1 FROM flow) AS found, (SELECT array_agg(id) FROM steps) AS cancelled
