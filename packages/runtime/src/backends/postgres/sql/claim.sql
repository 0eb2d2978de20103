-- Claims up to $2 jobs for worker $3, leasing them for $4 ms and counting the attempt before the handler
-- runs. Two kinds of rows are claimable, each read through the partial index whose predicate is exactly
-- its own, so finished and dead rows are never visited:
--   * ready jobs whose time has come          (jfast_jobs_ready_idx: state = 'ready')
--   * running jobs whose lease expired        (jfast_jobs_lease_idx: state = 'running')
-- An expired lease means the worker vanished mid-attempt: that attempt is spent and recorded with the
-- "worker lost" error ($5, its attempt number filled in here). If it was the last attempt the job goes
-- to dead letters in this same statement instead of being claimed (a poison pill that kills its worker
-- every time ends there, never loops). FOR UPDATE SKIP LOCKED lets concurrent claimers pass each other:
-- a row another claimer has locked is skipped, never waited for, never handed out twice.
-- Jobs of paused tasks ($6) are left where they are: the condition is a filter on rows the index scan reads, so
-- the partial indexes above still drive the claim (a long paused backlog at the head is read past, not used).
-- params: $1 queue, $2 limit, $3 worker id, $4 lease in ms, $5 worker-lost error (jsonb, attempt overwritten),
--         $6 paused tasks text[] (empty: none)
-- result: the claimed rows (job columns, times in epoch ms, errors NULL when none), oldest first (available_at, then enqueue order)
-- index:  jfast_jobs_ready_idx, jfast_jobs_lease_idx; jfast_jobs_pkey (id = ANY) for the updates
WITH expired AS (
  SELECT id, attempts, max_attempts, available_at, seq
  FROM jfast_jobs
  WHERE queue = $1 AND state = 'running' AND locked_until < now() AND task <> ALL($6::text[])
  ORDER BY locked_until
  LIMIT $2
  FOR UPDATE SKIP LOCKED
),
lost_for_good AS (
  UPDATE jfast_jobs AS j
  SET state = 'dead', died_at = now(), locked_by = NULL, locked_until = NULL,
      errors = j.errors || jsonb_build_array(jsonb_set($5::jsonb, '{attempt}', to_jsonb(j.attempts)))
  FROM expired AS e
  WHERE j.id = e.id AND e.attempts >= coalesce(e.max_attempts, 1)
  RETURNING j.id
),
ready AS (
  SELECT id, available_at, seq
  FROM jfast_jobs
  WHERE queue = $1 AND state = 'ready' AND available_at <= now() AND task <> ALL($6::text[])
  ORDER BY available_at, seq
  LIMIT $2
  FOR UPDATE SKIP LOCKED
),
chosen AS (
  SELECT id
  FROM (
    SELECT id, available_at, seq FROM expired WHERE attempts < coalesce(max_attempts, 1)
    UNION ALL
    SELECT id, available_at, seq FROM ready
  ) AS candidates
  ORDER BY available_at, seq
  LIMIT $2
),
-- The rows are found again by primary key from an array, never by a join: a join with a few hundred chosen
-- rows made the planner hash the whole table (finished rows included) on every claim. A chosen row that is
-- still 'running' is one whose lease expired: its lost attempt is recorded.
claimed AS (
  UPDATE jfast_jobs AS j
  SET state = 'running',
      locked_by = $3,
      locked_until = now() + $4::double precision * interval '1 millisecond',
      claimed_at = now(),
      attempts = j.attempts + 1,
      errors = CASE WHEN j.state = 'running'
                    THEN j.errors || jsonb_build_array(jsonb_set($5::jsonb, '{attempt}', to_jsonb(j.attempts)))
                    ELSE j.errors END
  WHERE j.id = ANY (ARRAY(SELECT id FROM chosen))
  -- Times as epoch milliseconds (double precision): parsing timestamptz text was the driver's largest cost per
  -- claimed row. No errors yet (a first attempt, nearly every claim) comes back as NULL: nothing to print as
  -- jsonb here and parse as JSON in the driver.
  RETURNING j.id, j.seq, j.task, j.payload, j.attempts, j.max_attempts,
            date_part('epoch', j.available_at) * 1000 AS available_at, date_part('epoch', j.created_at) * 1000 AS created_at,
            j.tenant_id, j.request_id, j.trace, nullif(j.errors, '[]'::jsonb) AS errors, j.timeout_ms
)
SELECT id, task, payload, attempts, max_attempts, available_at, created_at, tenant_id, request_id, trace, errors, timeout_ms
FROM claimed ORDER BY available_at, seq
