-- Claims jobs of limited tasks (docs/tasks.md#limits) within their limits, after claim-limits-lock.sql locked
-- their rows in this transaction; claim.sql then claims every other task's jobs, with these tasks among the ones
-- it leaves. Per task, what may start now is the least of: the claim's room ($2); its concurrency less its jobs
-- holding a slot that still run under a live lease (a slot of a finished, retried, released or lease-expired job
-- no longer counts, and is deleted here); its rate_max less its starts within the window. A job over a limit is
-- not touched: it stays ready, its attempt unspent. The rest is claim.sql's: a lost lease's attempt recorded, dead
-- when it was the last one.
-- params: $1 queue, $2 limit, $3 worker id, $4 lease in ms, $5 worker-lost error (jsonb), $6 locked tasks text[]
-- result: the claimed rows as claim.sql returns them, in claim order
-- index:  jfast_jobs_claim_idx, one range read per priority and task, filtered on the task (a limited task's jobs
--         are read among the others'); jfast_task_slots_pkey; jfast_jobs_pkey for the slots' jobs
WITH lim AS (
  SELECT task, concurrency, rate_max, rate_per_ms, starts
  FROM jfast_task_limits WHERE queue = $1 AND task = ANY($6::text[])
),
allowance AS (
  SELECT lim.task, LEAST(
    $2::integer,
    coalesce(lim.concurrency - (
      SELECT count(*)::integer FROM jfast_task_slots s JOIN jfast_jobs j ON j.id = s.job_id
      WHERE s.queue = $1 AND s.task = lim.task AND j.state = 'running' AND j.locked_until >= now()
    ), $2::integer),
    coalesce(lim.rate_max - (
      SELECT count(*)::integer FROM unnest(lim.starts) AS t(at) WHERE t.at > statement_timestamp() - lim.rate_per_ms * interval '1 millisecond'
    ), $2::integer)
  ) AS n
  FROM lim
),
candidates AS (
  SELECT c.ctid, c.task, c.state, c.attempts, c.max_attempts, c.priority, c.available_at, c.seq
  FROM allowance AS a
  CROSS JOIN LATERAL (
    SELECT x.ctid, x.task, x.state, x.attempts, x.max_attempts, x.priority, x.available_at, x.seq
    FROM unnest('{0,1,2,3,4,5,6,7,8,9}'::smallint[]) AS p(priority)
    CROSS JOIN LATERAL (
      SELECT ctid, task, state, attempts, max_attempts, priority, available_at, seq
      FROM jfast_jobs
      WHERE queue = $1 AND phase = 'open' AND priority = p.priority AND available_at <= now()
      -- Redundant with the conditions beside it, and only an index condition of jfast_jobs_claim_idx: it keeps the
      -- plan on that index when the table has no statistics yet (a fresh table before its first ANALYZE, or a server
      -- without autovacuum), where jfast_jobs_open_idx filtering priority row by row once made every claim read the backlog.
      AND (queue, priority, available_at) >= ($1, p.priority, '-infinity'::timestamptz) AND task = a.task
        AND (state = 'ready' OR locked_until < now() OR locked_until IS NULL)
      ORDER BY available_at, seq
      LIMIT a.n
      FOR UPDATE SKIP LOCKED
    ) AS x
    LIMIT a.n
  ) AS c
  WHERE a.n > 0
),
picked AS (
  SELECT * FROM candidates ORDER BY priority, available_at, seq LIMIT $2
),
lost_for_good AS (
  UPDATE jfast_jobs AS j
  SET state = 'dead', died_at = now(), locked_by = NULL, locked_until = NULL,
      errors = j.errors || jsonb_build_array(jsonb_set($5::jsonb, '{attempt}', to_jsonb(j.attempts)))
  WHERE j.ctid = ANY (ARRAY(SELECT ctid FROM picked WHERE state = 'running' AND attempts >= coalesce(max_attempts, 1)))
  RETURNING j.id
),
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
  WHERE j.ctid = ANY (ARRAY(SELECT ctid FROM picked WHERE state = 'ready' OR attempts < coalesce(max_attempts, 1)))
  RETURNING j.id, j.seq, j.task, j.priority, j.payload, j.attempts, j.max_attempts,
            date_part('epoch', j.available_at) * 1000 AS available_at, date_part('epoch', j.created_at) * 1000 AS created_at,
            j.tenant_id, j.request_id, j.trace, nullif(j.errors, '[]'::jsonb) AS errors, j.timeout_ms, j.flow,
            -- NULL but for a job with a deadline, which its worker ends 'expired' instead of running (expire.sql).
            date_part('epoch', j.expires_at) * 1000 AS expires_at
),
-- Slots whose job no longer runs go; the jobs claimed now take one (a job claimed again keeps its row). This
-- statement's snapshot still sees those jobs ready, so they are kept out of the deletion by id.
freed AS (
  DELETE FROM jfast_task_slots AS s
  WHERE s.queue = $1 AND s.task = ANY($6::text[])
    AND s.job_id <> ALL (ARRAY(SELECT id FROM claimed))
    AND NOT EXISTS (SELECT 1 FROM jfast_jobs j WHERE j.id = s.job_id AND j.state = 'running' AND j.locked_until >= now())
),
slots AS (
  INSERT INTO jfast_task_slots (queue, task, job_id)
  SELECT $1, c.task, c.id FROM claimed AS c JOIN lim ON lim.task = c.task WHERE lim.concurrency IS NOT NULL
  ON CONFLICT DO NOTHING
),
-- Each start is remembered, and starts that left the window are dropped: the array never holds more than rate_max
-- starts of the window (a claim never starts more).
started AS (
  UPDATE jfast_task_limits AS l
  SET starts = ARRAY(
    SELECT at FROM (
      SELECT t.at FROM unnest(l.starts) AS t(at) WHERE t.at > statement_timestamp() - l.rate_per_ms * interval '1 millisecond'
      UNION ALL
      SELECT statement_timestamp() FROM claimed AS c WHERE c.task = l.task
    ) AS w ORDER BY at
  )
  WHERE l.queue = $1 AND l.rate_max IS NOT NULL AND l.task IN (SELECT task FROM claimed)
)
SELECT id, task, priority, payload, attempts, max_attempts, available_at, created_at, tenant_id, request_id, trace, errors, timeout_ms, flow, expires_at
FROM claimed ORDER BY priority, available_at, seq
