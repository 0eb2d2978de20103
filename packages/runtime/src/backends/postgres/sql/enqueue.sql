-- Inserts a batch of jobs; an id that already exists is left alone (how events and schedules stay
-- idempotent), and every insert wakes listening workers. Runs either on its own (queue.enqueue) or inside
-- the caller's transaction (outbox.enqueue): then the NOTIFY is delivered only if that transaction commits.
-- One array per column, unnested in parallel: the payload travels as json text and is stored verbatim.
-- Per row, the cheapest input PostgreSQL can read: times as epoch milliseconds (a float, not timestamp text
-- to parse; to_timestamp rounds to the microsecond, so a millisecond comes back exactly) and no errors as
-- NULL rather than '[]' to parse as jsonb.
-- params: $1 queue, $2 notification channel, $3 ids text[], $4 tasks text[], $5 payloads json[],
--         $6 attempts int[], $7 max_attempts int[], $8 available_at epoch ms float8[], $9 created_at epoch ms float8[],
--         $10 tenant ids text[], $11 request ids text[], $12 traces jsonb[], $13 errors jsonb[] (NULL: none),
--         $14 timeouts bigint[]
-- result: one row { id } per job actually inserted
-- index:  jfast_jobs_pkey (ON CONFLICT; a first hand-off of generated ids runs this without it, see load-sql.ts)
WITH inserted AS (
  INSERT INTO jfast_jobs (
    id, queue, task, payload, attempts, max_attempts, available_at, created_at,
    tenant_id, request_id, trace, errors, timeout_ms
  )
  SELECT j.id, $1, j.task, j.payload, j.attempts, j.max_attempts,
         to_timestamp(j.available_at / 1000), to_timestamp(j.created_at / 1000),
         j.tenant_id, j.request_id, j.trace, coalesce(j.errors, '[]'::jsonb), j.timeout_ms
  FROM unnest(
    $3::text[], $4::text[], $5::json[], $6::integer[], $7::integer[], $8::float8[], $9::float8[],
    $10::text[], $11::text[], $12::jsonb[], $13::jsonb[], $14::bigint[]
  ) AS j(id, task, payload, attempts, max_attempts, available_at, created_at,
         tenant_id, request_id, trace, errors, timeout_ms)
  ON CONFLICT (id) DO NOTHING
  RETURNING id
)
-- One NOTIFY per statement, not per row: the uncorrelated subquery is evaluated once, and only when a row was
-- inserted (PostgreSQL would fold identical notifications anyway, but calling pg_notify per row cost a third of
-- a bulk enqueue). The other statements that wake workers do the same.
SELECT id, (SELECT pg_notify($2, '')) AS notified FROM inserted
