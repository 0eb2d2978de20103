-- Inserts a batch of new jobs (ids generated in this process, never stored: no ON CONFLICT, as the first
-- hand-off of enqueue.sql) of which the rows with a worker in $17 are stored already claimed by that worker of
-- this process: running, leased for its lease ($18 ms), attempt counted, exactly as claim.sql leaves them. The enqueuing
-- process hands those jobs to that idle worker in memory once this commits (docs/postgres.md#in-process-hand-off):
-- one commit instead of an insert, a NOTIFY, a wake-up and a claim. The caller wakes workers after the commit
-- only if some row is left ready for them (`ready`). Row order is enqueue order either way (seq).
-- params: $1 queue, $2..$16 the columns of enqueue.sql (read the same way), $17 worker
--         ids text[] (NULL: stored ready), $18 leases in ms float8[] (NULL for a ready row)
-- result: one row { inserted, ready }
-- index:  none read; every index gets its entry as for enqueue.sql
WITH inserted AS (
  INSERT INTO jfast_jobs (
    id, queue, task, payload, attempts, max_attempts, available_at, created_at,
    tenant_id, request_id, trace, errors, timeout_ms, priority, state, locked_by, locked_until, claimed_at
  )
  SELECT j.id, $1, coalesce(j.task, $14), j.payload,
         coalesce(j.attempts, 0) + CASE WHEN j.locked_by IS NULL THEN 0 ELSE 1 END, coalesce(j.max_attempts, $15::integer),
         to_timestamp(j.available_at / 1000), to_timestamp(coalesce(j.created_at, j.available_at) / 1000),
         j.tenant_id, j.request_id, j.trace, coalesce(j.errors, '[]'::jsonb), j.timeout_ms, coalesce(j.priority, 5),
         CASE WHEN j.locked_by IS NULL THEN 'ready' ELSE 'running' END,
         j.locked_by, now() + j.lease_ms * interval '1 millisecond',
         CASE WHEN j.locked_by IS NULL THEN NULL ELSE now() END
  FROM unnest(
    $2::text[], $3::text[], $4::json[], $5::integer[], $6::integer[], $7::float8[], $8::float8[],
    $9::text[], $10::text[], $11::jsonb[], $12::jsonb[], $13::bigint[], $16::smallint[], $17::text[], $18::float8[]
  ) AS j(id, task, payload, attempts, max_attempts, available_at, created_at,
         tenant_id, request_id, trace, errors, timeout_ms, priority, locked_by, lease_ms)
  RETURNING state
)
SELECT count(*) AS inserted, count(*) FILTER (WHERE state = 'ready') AS ready
FROM inserted
