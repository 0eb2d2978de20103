-- The steps a completing flow step spawned (tools.flow.spawn, core/flow.ts planSpawn), written in the transaction
-- of its completion and before it (complete-flow.sql then counts the step for them, as for any child): only while
-- the step is still running for this worker, so a completion written twice, or after the lease passed on, writes
-- none. Each is 'waiting' for its parents, the spawning step among them; the steps after the spawning one join its
-- children. Locks the spawning step's row only (its own), so the order of complete-flow.sql's locks holds.
-- params: $1 queue, $2-$16 the steps' job columns as in enqueue.sql (jobsToColumns), $17 each step's JobFlow as
--         JSON text[], $18 each step's children's job ids as a JSON array text[], $19 each step's parent count
--         integer[] (the spawning step included), $20 the spawning step's id, $21 worker id, $22 the ids of the
--         steps directly after it text[]
-- result: one row { owned: 0 or 1, inserted: steps written }
-- index:  jfast_jobs_pkey
WITH parent AS (
  UPDATE jfast_jobs
  SET flow_children = coalesce(flow_children, '{}'::text[]) || $22::text[]
  WHERE id = $20 AND locked_by = $21 AND state = 'running' AND flow_id IS NOT NULL
  RETURNING flow_id
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
         'waiting', j.flow, parent.flow_id, ARRAY(SELECT jsonb_array_elements_text(j.children)), j.pending
  FROM parent, unnest(
    $2::text[], $3::text[], $4::json[], $5::integer[], $6::integer[], $7::float8[], $8::float8[],
    $9::text[], $10::text[], $11::jsonb[], $12::jsonb[], $13::bigint[], $16::smallint[],
    $17::jsonb[], $18::jsonb[], $19::integer[]
  ) AS j(id, task, payload, attempts, max_attempts, available_at, created_at,
         tenant_id, request_id, trace, errors, timeout_ms, priority, flow, children, pending)
  ON CONFLICT (id) DO NOTHING
  RETURNING 1
)
SELECT (SELECT count(*) FROM parent) AS owned, (SELECT count(*) FROM steps) AS inserted
