-- Inserts a batch of jobs; an id that already exists is left alone (how events and schedules stay
-- idempotent), and every insert wakes listening workers. Runs either on its own (queue.enqueue) or inside
-- the caller's transaction (outbox.enqueue): then the NOTIFY is delivered only if that transaction commits.
-- One array per column, unnested in parallel: the payload travels as json text and is stored verbatim.
-- Per row, the cheapest input PostgreSQL can read: times as epoch milliseconds (a float, not timestamp text
-- to parse; to_timestamp rounds to the microsecond, so a millisecond comes back exactly), no errors as NULL
-- rather than '[]' to parse as jsonb, and no array at all for a column that is the same for every row
-- (jobsToColumns in job-rows.ts): a NULL array unnests as NULL in every row, read as the column's usual value.
-- params: $1 queue, $2 notification channel, $3 ids text[], $4 tasks text[] (NULL: every row's task is $15),
--         $5 payloads json[], $6 attempts int[] (NULL: 0), $7 max_attempts int[] (NULL: every row's is $16),
--         $8 available_at epoch ms float8[], $9 created_at epoch ms float8[] (NULL: available_at), $10 tenant
--         ids text[], $11 request ids text[], $12 traces jsonb[], $13 errors jsonb[] (NULL: none), $14 timeouts
--         bigint[], $15 the task of every row when $4 is NULL, $16 the max_attempts of every row when $7 is NULL,
--         $17 priorities smallint[] (NULL: every row's is 5, the default)
-- result: one row { id } per job actually inserted
-- index:  jfast_jobs_pkey (ON CONFLICT; a first hand-off of generated ids runs this without it, see load-sql.ts)
WITH inserted AS (
  INSERT INTO jfast_jobs (
    id, queue, task, payload, attempts, max_attempts, available_at, created_at,
    tenant_id, request_id, trace, errors, timeout_ms, priority
  )
  SELECT j.id, $1, coalesce(j.task, $15), j.payload, coalesce(j.attempts, 0), coalesce(j.max_attempts, $16::integer),
         to_timestamp(j.available_at / 1000), to_timestamp(coalesce(j.created_at, j.available_at) / 1000),
         j.tenant_id, j.request_id, j.trace, coalesce(j.errors, '[]'::jsonb), j.timeout_ms, coalesce(j.priority, 5)
  FROM unnest(
    $3::text[], $4::text[], $5::json[], $6::integer[], $7::integer[], $8::float8[], $9::float8[],
    $10::text[], $11::text[], $12::jsonb[], $13::jsonb[], $14::bigint[], $17::smallint[]
  ) AS j(id, task, payload, attempts, max_attempts, available_at, created_at,
         tenant_id, request_id, trace, errors, timeout_ms, priority)
  ON CONFLICT (id) DO NOTHING
  RETURNING id
)
-- One NOTIFY per statement, not per row: the uncorrelated subquery is evaluated once, and only when a row was
-- inserted (PostgreSQL would fold identical notifications anyway, but calling pg_notify per row cost a third of
-- a bulk enqueue). The other statements that wake workers do the same.
SELECT id, (SELECT pg_notify($2, '')) AS notified FROM inserted
