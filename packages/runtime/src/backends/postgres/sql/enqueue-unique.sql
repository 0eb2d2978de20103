-- Inserts a batch of jobs of which some are unique (docs/tasks.md#unique-jobs): enqueue.sql with the three unique
-- columns, and ON CONFLICT without a target, so that a row is skipped when its id exists (as in enqueue.sql) or
-- when another job holds its key in jfast_jobs_unique_idx. A conflicting insert that is not committed yet is
-- waited for: of concurrent enqueues of one key, exactly one row is inserted. Only batches with a unique job
-- run this; the others run enqueue.sql, untouched.
-- params: $1..$16 as enqueue.sql, $17 scoped keys text[] (NULL for a job held by period or not unique), $18 phases
--         as array literals text[] (NULL: the row holds no key in the index), $19 the jobs' unique option jsonb[]
-- result: one row { ids }: the ids of the jobs actually inserted, as one array (cheaper to read than a row each)
-- index:  jfast_jobs_pkey, jfast_jobs_unique_idx (ON CONFLICT)
WITH inserted AS (
  INSERT INTO jfast_jobs (
    id, queue, task, payload, attempts, max_attempts, available_at, created_at,
    tenant_id, request_id, trace, errors, timeout_ms, priority, unique_key, unique_phases, unique_spec
  )
  SELECT j.id, $1, coalesce(j.task, $14), j.payload, coalesce(j.attempts, 0), coalesce(j.max_attempts, $15::integer),
         to_timestamp(j.available_at / 1000), to_timestamp(coalesce(j.created_at, j.available_at) / 1000),
         j.tenant_id, j.request_id, j.trace, coalesce(j.errors, '[]'::jsonb), j.timeout_ms, coalesce(j.priority, 5),
         j.unique_key, j.unique_phases::text[], j.unique_spec
  FROM unnest(
    $2::text[], $3::text[], $4::json[], $5::integer[], $6::integer[], $7::float8[], $8::float8[],
    $9::text[], $10::text[], $11::jsonb[], $12::jsonb[], $13::bigint[], $16::smallint[], $17::text[], $18::text[], $19::jsonb[]
  ) AS j(id, task, payload, attempts, max_attempts, available_at, created_at,
         tenant_id, request_id, trace, errors, timeout_ms, priority, unique_key, unique_phases, unique_spec)
  ON CONFLICT DO NOTHING
  RETURNING id
)
SELECT coalesce(array_agg(id), '{}') AS ids FROM inserted
