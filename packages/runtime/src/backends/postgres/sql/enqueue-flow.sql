-- Writes a flow (core/flow.ts FlowPlan): its row in jfast_flows and every step's job, in one statement, so all of
-- it or none exists, on the backend's own connection or in the caller's transaction (outbox.flow). A step with no
-- parent is ready (due at its availableAt), the others 'waiting' with flow_pending parents to wait for. A flow id
-- that exists already writes nothing (the steps are inserted only when the flow's row is).
-- params: $1 queue, $2-$16 the steps' job columns as in enqueue.sql (jobsToColumns), $17 each step's JobFlow as
--         JSON text[], $18 each step's children's job ids as a JSON array text[], $19 each step's parent count
--         integer[], $20 flow id, $21 name, $22 kind, $23 tenant id, $24 created at (timestamptz)
-- result: one row { created: 0 or 1, ready: steps written ready }
-- index:  jfast_flows_pkey (ON CONFLICT), jfast_jobs_pkey
WITH flow AS (
  INSERT INTO jfast_flows (id, queue, name, kind, tenant_id, created_at, total)
  VALUES ($20, $1, $21, $22, $23, $24::timestamptz, cardinality($2::text[]))
  ON CONFLICT (id) DO NOTHING
  RETURNING id
),
steps AS (
  INSERT INTO jfast_jobs (
    id, queue, task, payload, attempts, max_attempts, available_at, created_at,
    tenant_id, request_id, trace, errors, timeout_ms, priority,
    state, flow, flow_id, flow_children, flow_pending
  )
  SELECT j.id, $1, coalesce(j.task, $14), j.payload, coalesce(j.attempts, 0), coalesce(j.max_attempts, $15::integer),
         to_timestamp(j.available_at / 1000), to_timestamp(coalesce(j.created_at, j.available_at) / 1000),
         j.tenant_id, j.request_id, j.trace, coalesce(j.errors, '[]'::jsonb), j.timeout_ms, coalesce(j.priority, 5),
         CASE WHEN j.pending > 0 THEN 'waiting' ELSE 'ready' END, j.flow, flow.id,
         ARRAY(SELECT jsonb_array_elements_text(j.children)), j.pending
  FROM flow, unnest(
    $2::text[], $3::text[], $4::json[], $5::integer[], $6::integer[], $7::float8[], $8::float8[],
    $9::text[], $10::text[], $11::jsonb[], $12::jsonb[], $13::bigint[], $16::smallint[],
    $17::jsonb[], $18::jsonb[], $19::integer[]
  ) AS j(id, task, payload, attempts, max_attempts, available_at, created_at,
         tenant_id, request_id, trace, errors, timeout_ms, priority, flow, children, pending)
  RETURNING state
)
SELECT (SELECT count(*) FROM flow) AS created, (SELECT count(*) FROM steps WHERE state = 'ready') AS ready
