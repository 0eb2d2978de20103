-- Retention of a broker queue's flows (FlowStore.prune, by keep_completed): finished flows (completed, or
-- cancelled) that finished before $2, or beyond the newest $3 finished ones, deleted with their steps (ON DELETE
-- CASCADE), at most $4 flows. A failed flow has not finished: it stays until its dead step is retried or discarded.
-- params: $1 queue, $2 finished before (timestamptz or null), $3 finished flows kept (integer or null), $4 limit
-- result: one row { flows, steps }: how many were deleted
-- index:  jfast_flows_list_idx (queue, seq DESC), oldest first; jfast_flow_steps_flow_idx for the cascade
WITH finished AS (
  SELECT id, seq, row_number() OVER (ORDER BY seq DESC) AS newest
  FROM jfast_flows
  WHERE queue = $1 AND finished_at IS NOT NULL AND ($2::timestamptz IS NULL OR finished_at < $2::timestamptz)
),
doomed AS (
  SELECT id FROM finished
  WHERE $3::integer IS NULL OR newest > $3::integer
  ORDER BY seq
  LIMIT $4
),
steps AS (
  SELECT count(*) AS n FROM jfast_flow_steps WHERE flow_id IN (SELECT id FROM doomed)
),
deleted AS (
  DELETE FROM jfast_flows WHERE id IN (SELECT id FROM doomed) RETURNING 1
)
SELECT (SELECT count(*) FROM deleted) AS flows, (SELECT n FROM steps) AS steps
