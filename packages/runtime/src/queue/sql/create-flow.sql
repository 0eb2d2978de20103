-- Writes a flow for a broker queue (FlowStore.create): its row in jfast_flows and every step, in one statement, or
-- nothing when the flow's id exists. A step with no parent is ready, published by the caller after the commit (by
-- the sweep once $4 ms have passed without); the others wait for `pending` parents.
-- params: $1 queue, $2 the flow without its steps as JSON { id, name, kind, tenantId, createdAt },
--         $3 the steps as a JSON array [{ id, job, children, pending }], $4 publish lease ms
-- result: { created, job } for each step written ready; one row with job null when none is
-- index:  jfast_flows_pkey (ON CONFLICT), jfast_flow_steps_pkey
WITH flow AS (
  INSERT INTO jfast_flows (id, queue, name, kind, tenant_id, created_at, total)
  SELECT $2::jsonb->>'id', $1, $2::jsonb->>'name', $2::jsonb->>'kind', $2::jsonb->>'tenantId',
         ($2::jsonb->>'createdAt')::timestamptz, jsonb_array_length($3::jsonb)
  ON CONFLICT (id) DO NOTHING
  RETURNING id
),
steps AS (
  INSERT INTO jfast_flow_steps (job_id, flow_id, queue, job, children, pending, state, publish_after)
  SELECT s.id, flow.id, $1, s.job, ARRAY(SELECT jsonb_array_elements_text(s.children)), s.pending,
         CASE WHEN s.pending > 0 THEN 'waiting' ELSE 'ready' END,
         CASE WHEN s.pending > 0 THEN NULL ELSE now() + $4::double precision * interval '1 millisecond' END
  FROM flow, jsonb_to_recordset($3::jsonb) AS s(id text, job jsonb, children jsonb, pending integer)
  RETURNING state, job
)
SELECT (SELECT count(*) FROM flow) AS created, steps.job
FROM (SELECT 1) AS one LEFT JOIN steps ON steps.state = 'ready'
