-- Claims up to $2 jobs for worker $3, leasing them for $4 ms and counting the attempt before the handler
-- runs. Two kinds of rows are claimable, both read from jfast_jobs_claim_idx (phase = 'open': ready and running
-- jobs), priority 0 first, within a priority in order of availability then enqueueing, so finished and dead rows
-- are never visited:
--   * ready jobs whose time has come
--   * running jobs whose lease expired (or that have none: a row no claim of ours wrote)
-- The rows the scan passes over are the jobs running now under a live lease (and those of paused tasks).
-- An expired lease means the worker vanished mid-attempt: that attempt is spent and recorded with the
-- "worker lost" error ($5, its attempt number filled in here). If it was the last attempt the job goes
-- to dead letters in this same statement instead of being claimed (a poison pill that kills its worker
-- every time ends there, never loops). FOR UPDATE SKIP LOCKED lets concurrent claimers pass each other:
-- a row another claimer has locked is skipped, never waited for, never handed out twice.
-- The claim changes no indexed column (phase stays 'open'), so the new row versions are HOT updates: no
-- index entry is written (migration 0013).
-- Jobs of paused tasks ($6) are left where they are: the condition is a filter on rows the index scan reads.
-- The claim commits without waiting for its WAL to reach disk (synchronous_commit off for this transaction
-- only, set by the one-time filter below). A claim lost to a server crash in the moment after its commit
-- leaves the job as it was before it: ready (or its lease expired) and run again, which at-least-once
-- delivery allows. Whatever the handler then writes with a durable commit (an inbox row, the completion)
-- flushes the WAL up to and past the claim. It takes the disk flush off the path from enqueue to handler.
-- params: $1 queue, $2 limit, $3 worker id, $4 lease in ms, $5 worker-lost error (jsonb, attempt overwritten),
--         $6 paused tasks text[] (empty: none)
-- result: the claimed rows (job columns, times in epoch ms, errors NULL when none), in claim order (priority,
--         available_at, then enqueue order)
-- index:  jfast_jobs_claim_idx (queue, priority, available_at, seq), one range read per priority; the updates
--         find the locked rows by ctid (a TID scan, no index)
-- Priorities (docs/tasks.md#priority): the index is read once per priority, 0 first, each read a range that ends
-- at now(), so a delayed job is never passed over and a due one never sorted. The reads run lazily, one after
-- another, under the outer LIMIT (a nested loop keeps its outer order): once $2 rows are locked no further read
-- starts and no row beyond them is locked. An empty priority costs one index descent.
WITH candidates AS (
  SELECT c.ctid, c.state, c.attempts, c.max_attempts
  FROM unnest('{0,1,2,3,4,5,6,7,8,9}'::smallint[]) AS p(priority)
  CROSS JOIN LATERAL (
    SELECT ctid, state, attempts, max_attempts
    FROM jfast_jobs
    WHERE queue = $1 AND phase = 'open' AND priority = p.priority AND available_at <= now()
      -- Redundant with the conditions beside it, and only an index condition of jfast_jobs_claim_idx: it keeps the
      -- plan on that index when the table has no statistics yet (a fresh table before its first ANALYZE, or a server
      -- without autovacuum), where jfast_jobs_open_idx filtering priority row by row once made every claim read the backlog.
      AND (queue, priority, available_at) >= ($1, p.priority, '-infinity'::timestamptz)
      AND (state = 'ready' OR locked_until < now() OR locked_until IS NULL) AND task <> ALL($6::text[])
      AND (SELECT set_config('synchronous_commit', 'off', true)) = 'off'
    ORDER BY available_at, seq
    LIMIT $2
    FOR UPDATE SKIP LOCKED
  ) AS c
  LIMIT $2
),
lost_for_good AS (
  UPDATE jfast_jobs AS j
  SET state = 'dead', died_at = now(), locked_by = NULL, locked_until = NULL,
      errors = j.errors || jsonb_build_array(jsonb_set($5::jsonb, '{attempt}', to_jsonb(j.attempts)))
  WHERE j.ctid = ANY (ARRAY(SELECT ctid FROM candidates WHERE state = 'running' AND attempts >= coalesce(max_attempts, 1)))
  RETURNING j.id
),
-- The rows are found again by their physical address (ctid) from an array: a TID scan, no index descent per
-- row (by primary key it took 40 % longer for a batch of 1 000), and never a join (with a few hundred chosen rows
-- the planner hashed the whole table, finished rows included, on every claim). A locked row cannot move: its
-- ctid stays its own until this statement ends. Should a row have been changed by a transaction that
-- committed after this statement's snapshot and still qualify when locked (so the lock is on a version the
-- snapshot does not see), its ctid finds nothing to update: the job is simply not claimed this time.
-- A chosen row that is still 'running' is one whose lease expired: its lost attempt is recorded.
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
  WHERE j.ctid = ANY (ARRAY(SELECT ctid FROM candidates WHERE state = 'ready' OR attempts < coalesce(max_attempts, 1)))
  -- Times as epoch milliseconds (double precision): parsing timestamptz text was the driver's largest cost per
  -- claimed row. No errors yet (a first attempt, nearly every claim) comes back as NULL: nothing to print as
  -- jsonb here and parse as JSON in the driver.
  RETURNING j.id, j.seq, j.task, j.priority, j.payload, j.attempts, j.max_attempts,
            date_part('epoch', j.available_at) * 1000 AS available_at, date_part('epoch', j.created_at) * 1000 AS created_at,
            j.tenant_id, j.request_id, j.trace, nullif(j.errors, '[]'::jsonb) AS errors, j.timeout_ms, j.flow,
            -- NULL but for a job with a deadline, which its worker ends 'expired' instead of running (expire.sql).
            date_part('epoch', j.expires_at) * 1000 AS expires_at
)
SELECT id, task, priority, payload, attempts, max_attempts, available_at, created_at, tenant_id, request_id, trace, errors, timeout_ms, flow, expires_at
FROM claimed ORDER BY priority, available_at, seq
