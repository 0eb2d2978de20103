-- Claims jobs of fair tasks (docs/flow-control.md#fair-share-across-keys) that have fairness alone (no per-key
-- concurrency, order or per-key rate limit: claim-keyed.sql), in turn order. Each job's turn was fixed when it came
-- due (fair-place.sql: its key's next turn, 1/weight past the last, never behind the task's least waiting one), so
-- the claim reads one range of jfast_jobs_fair_idx from the lowest turn, as claim.sql reads the oldest jobs, and
-- writes nothing but the jobs it claims: no key is read, locked or moved on. Jobs due but not placed yet (delayed,
-- backed off, retried: fair_turn 'Infinity') are not claimed here; a last row says whether any wait (pending), and
-- the caller places them (fair-place.sql) and claims again. Concurrent claimers pass each other's locked rows.
-- A task-wide concurrency and rate limit hold for the task as a whole, as in claim-keyed.sql, when it runs after
-- claim-limits-lock.sql in a transaction; a lost lease's attempt recorded, dead when it was the last one.
-- params: $1 queue, $2 limit, $3 worker id, $4 lease in ms, $5 worker-lost error (jsonb), $6 fair tasks text[]
-- result: the claimed rows as claim.sql returns them, in claim order, then { pending: true } when due jobs of the
--         tasks wait to be placed
-- index:  jfast_jobs_fair_idx (queue, task, fair_turn, available_at, seq), one range read per task; the updates find
--         the locked rows by ctid
WITH lim AS (
  SELECT task, concurrency, rate_max, rate_per_ms, starts
  FROM jfast_task_limits WHERE queue = $1 AND task = ANY($6::text[]) AND fair
),
task_room AS (
  SELECT lim.task, LEAST(
    $2::integer,
    coalesce(lim.rate_max - (
      SELECT count(*)::integer FROM unnest(lim.starts) AS t(at) WHERE t.at > statement_timestamp() - lim.rate_per_ms * interval '1 millisecond'
    ), $2::integer),
    CASE WHEN lim.concurrency IS NULL THEN $2::integer ELSE lim.concurrency - (
      SELECT count(*)::integer FROM jfast_task_slots AS s JOIN jfast_jobs AS j ON j.id = s.job_id
      WHERE s.queue = $1 AND s.task = lim.task AND j.state = 'running' AND j.locked_until >= now()
    ) END
  ) AS n
  FROM lim
),
-- Per task, its lowest turns: the jobs running under a live lease are passed over, as claim.sql passes them.
picked AS (
  SELECT c.* FROM task_room AS r
  CROSS JOIN LATERAL (
    SELECT ctid, id, task, state, attempts, max_attempts, priority, available_at, seq, fair_turn
    FROM jfast_jobs
    WHERE queue = $1 AND task = r.task AND phase = 'open' AND fair_turn < 'Infinity'::double precision
      AND (state = 'ready' OR locked_until < now() OR locked_until IS NULL) AND available_at <= now()
    ORDER BY fair_turn, available_at, seq
    LIMIT r.n
    FOR UPDATE SKIP LOCKED
  ) AS c
  WHERE r.n > 0
  ORDER BY c.fair_turn, c.available_at, c.seq
  LIMIT $2
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
  RETURNING j.id, j.seq, j.task, j.limit_key, j.priority, j.payload, j.attempts, j.max_attempts,
            date_part('epoch', j.available_at) * 1000 AS available_at, date_part('epoch', j.created_at) * 1000 AS created_at,
            j.tenant_id, j.request_id, j.trace, nullif(j.errors, '[]'::jsonb) AS errors, j.timeout_ms, j.flow, j.fair_turn
),
-- As in claim-keyed.sql: slots whose job no longer runs go, the jobs claimed now take one (a task-wide concurrency).
freed AS (
  DELETE FROM jfast_task_slots AS s
  WHERE s.queue = $1 AND s.task = ANY($6::text[])
    AND s.job_id <> ALL (ARRAY(SELECT id FROM claimed))
    AND NOT EXISTS (SELECT 1 FROM jfast_jobs j WHERE j.id = s.job_id AND j.state = 'running' AND j.locked_until >= now())
),
slots AS (
  INSERT INTO jfast_task_slots (queue, task, job_id, limit_key)
  SELECT $1, c.task, c.id, c.limit_key FROM claimed AS c JOIN lim ON lim.task = c.task WHERE lim.concurrency IS NOT NULL
  ON CONFLICT (queue, task, job_id) DO UPDATE SET limit_key = excluded.limit_key
),
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
(SELECT id, task, priority, payload, attempts, max_attempts, available_at, created_at, tenant_id, request_id, trace, errors, timeout_ms, flow,
        NULL::boolean AS pending
 FROM claimed ORDER BY fair_turn, available_at, seq)
UNION ALL
(SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, true
 -- One index descent per task (by task = ANY the scan would read every fair job of the queue).
 WHERE EXISTS (
   SELECT 1 FROM unnest($6::text[]) AS t(task)
   CROSS JOIN LATERAL (
     SELECT 1 FROM jfast_jobs
     WHERE queue = $1 AND task = t.task AND phase = 'open' AND fair_turn = 'Infinity'::double precision AND available_at <= now()
     LIMIT 1
   ) AS w
 ))
