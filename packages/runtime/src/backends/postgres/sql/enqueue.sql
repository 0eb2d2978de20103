-- Inserts a batch of jobs; an id that already exists is left alone (how events and schedules stay
-- idempotent). Runs either on its own (queue.enqueue) or inside the caller's transaction (outbox.enqueue).
-- No NOTIFY here: a notifying transaction's commit takes a database-wide lock that keeps enqueues from committing
-- as a group. The backend wakes workers after the commit, coalesced (wake-ups.ts), or through this statement's
-- notifying form at most once per window (load-sql.ts).
-- One array per column, unnested in parallel: the payload travels as json text and is stored verbatim.
-- Per row, the cheapest input PostgreSQL can read: times as epoch milliseconds (a float, not timestamp text
-- to parse; to_timestamp rounds to the microsecond, so a millisecond comes back exactly), no errors as NULL
-- rather than '[]' to parse as jsonb, and no array at all for a column that is the same for every row
-- (jobsToColumns in job-rows.ts): a NULL array unnests as NULL in every row, read as the column's usual value.
-- params: $1 queue, $2 ids text[], $3 tasks text[] (NULL: every row's task is $14),
--         $4 payloads json[], $5 attempts int[] (NULL: 0), $6 max_attempts int[] (NULL: every row's is $15),
--         $7 available_at epoch ms float8[], $8 created_at epoch ms float8[] (NULL: available_at), $9 tenant
--         ids text[], $10 request ids text[], $11 traces jsonb[], $12 errors jsonb[] (NULL: none), $13 timeouts
--         bigint[], $14 the task of every row when $3 is NULL, $15 the max_attempts of every row when $6 is NULL,
--         $16 priorities smallint[] (NULL: every row's is 5, the default)
-- result: one row { id } per job actually inserted
-- index:  jfast_jobs_pkey (ON CONFLICT; a first hand-off of generated ids runs this without it, see load-sql.ts)
WITH inserted AS (
  INSERT INTO jfast_jobs (
    id, queue, task, payload, attempts, max_attempts, available_at, created_at,
    tenant_id, request_id, trace, errors, timeout_ms, priority
  )
  SELECT j.id, $1, coalesce(j.task, $14), j.payload, coalesce(j.attempts, 0), coalesce(j.max_attempts, $15::integer),
         to_timestamp(j.available_at / 1000), to_timestamp(coalesce(j.created_at, j.available_at) / 1000),
         j.tenant_id, j.request_id, j.trace, coalesce(j.errors, '[]'::jsonb), j.timeout_ms, coalesce(j.priority, 5)
  FROM unnest(
    $2::text[], $3::text[], $4::json[], $5::integer[], $6::integer[], $7::float8[], $8::float8[],
    $9::text[], $10::text[], $11::jsonb[], $12::jsonb[], $13::bigint[], $16::smallint[]
  ) AS j(id, task, payload, attempts, max_attempts, available_at, created_at,
         tenant_id, request_id, trace, errors, timeout_ms, priority)
  ON CONFLICT (id) DO NOTHING
  RETURNING id
)
SELECT id FROM inserted
