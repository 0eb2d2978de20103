-- Claims jobs of fair tasks (docs/flow-control.md#fair-share-across-keys) that have fairness alone (no per-key
-- concurrency, order or per-key rate limit: claim-keyed.sql), after claim-limits-lock.sql locked their limit rows in
-- this transaction, at the cost of the batch it claims: it reads the task's first keys in turn order from
-- jfast_fair_keys (kept by set-limit-keys.sql at enqueue), never every key of the task. Each key's next jobs are
-- placed at its turn plus 1/weight per job, and the earliest turns are claimed; a key's first turn comes before its
-- later ones, so no key past the first $2 with a due job can have one of them. The keys served move on by the turns
-- they took. The keys read that have no open job left are returned (rows with a null id) and dropped by
-- fair-keys-drop.sql, the next statement: they stay locked until then, so an enqueue adding a job to one of them
-- waits and adds the key again. A key locked by another transaction (an enqueue adding to it) is passed this time.
-- A task-wide concurrency and rate limit hold for the task as a whole, as in claim-keyed.sql; a lost lease's attempt
-- recorded, dead when it was the last one.
-- params: $1 queue, $2 limit, $3 worker id, $4 lease in ms, $5 worker-lost error (jsonb), $6 locked fair tasks text[]
-- result: the claimed rows as claim.sql returns them, in claim order, then { task, empty_key } per key left empty
-- index:  jfast_fair_keys_turn_idx; jfast_jobs_limit_key_idx (each key's due jobs); jfast_jobs_pkey
WITH lim AS (
  SELECT task, concurrency, weights, rate_max, rate_per_ms, starts
  FROM jfast_task_limits WHERE queue = $1 AND task = ANY($6::text[]) AND fair
),
task_room AS (
  SELECT lim.task, lim.weights, LEAST(
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
-- Per task, its first keys in turn order that have a due job or no open job at all, each probed once for a due job.
keys AS (
  SELECT r.task, r.n, k.limit_key, k.turn, k.served_at, k.due, coalesce((r.weights ->> k.limit_key)::double precision, 1) AS weight,
         row_number() OVER (PARTITION BY r.task, k.due ORDER BY k.turn, k.served_at, k.limit_key) AS place
  FROM task_room AS r
  CROSS JOIN LATERAL (
    SELECT fk.limit_key, fk.turn, fk.served_at, p.due
    FROM jfast_fair_keys AS fk
    -- Each probe one index lookup for this key, in a subquery of its own (OFFSET 0): left in the WHERE, the planner
    -- may turn the open-job probe into a hash of every open job of the queue, read for each claim. A due key is not
    -- probed for open jobs at all.
    CROSS JOIN LATERAL (
      SELECT d.due, CASE WHEN d.due THEN false ELSE NOT EXISTS (
               SELECT 1 FROM jfast_jobs AS o
               WHERE o.queue = $1 AND o.task = fk.task AND o.limit_key = fk.limit_key AND o.phase = 'open'
             ) END AS empty
      FROM (SELECT EXISTS (
        SELECT 1 FROM jfast_jobs AS d
        WHERE d.queue = $1 AND d.task = fk.task AND d.limit_key = fk.limit_key AND d.phase = 'open' AND d.available_at <= now()
          AND (d.state = 'ready' OR d.locked_until < now() OR d.locked_until IS NULL)
      ) AS due) AS d
      OFFSET 0
    ) AS p
    WHERE fk.queue = $1 AND fk.task = r.task AND (p.due OR p.empty)
    ORDER BY fk.turn, fk.served_at, fk.limit_key
    LIMIT 2 * $2::integer + 8
    FOR UPDATE OF fk SKIP LOCKED
  ) AS k
  WHERE r.n > 0
),
-- The first $2 due keys. Each has a job at its turn plus 1/weight, so when a task has m = least($2, its room) of
-- them, the last turn it claims is at most the m-th smallest of those (bound), and a key needs no more of its jobs
-- than fall at or before it; with fewer keys, the key in place p can take no more than $2 - p + 1.
firsts AS (
  SELECT a.*, row_number() OVER (PARTITION BY a.task ORDER BY a.turn + 1 / a.weight) AS first_rank
  FROM keys AS a
  WHERE a.due AND a.place <= $2::integer
),
bound AS (
  SELECT f.task, max(f.turn + 1 / f.weight) FILTER (WHERE f.first_rank <= least($2::integer, f.n)) AS turn,
         count(*) >= least($2::integer, min(f.n)) AS enough
  FROM firsts AS f
  GROUP BY f.task
),
found AS (
  SELECT c.ctid, c.id, c.task, c.limit_key, c.state, c.attempts, c.max_attempts, c.priority, c.available_at, c.seq,
         a.turn AS base, a.weight, a.served_at
  FROM firsts AS a
  JOIN bound AS b ON b.task = a.task
  CROSS JOIN LATERAL (
    SELECT ctid, id, task, limit_key, state, attempts, max_attempts, priority, available_at, seq
    FROM jfast_jobs
    WHERE queue = $1 AND task = a.task AND limit_key = a.limit_key AND phase = 'open' AND available_at <= now()
      AND (state = 'ready' OR locked_until < now() OR locked_until IS NULL)
    ORDER BY priority, available_at, seq
    LIMIT CASE WHEN b.enough
               THEN least(greatest($2::integer - a.place + 1, 1), greatest(floor((b.turn - a.turn) * a.weight + 1e-6), 0)::integer)
               ELSE greatest($2::integer - a.place + 1, 1) END
    FOR UPDATE SKIP LOCKED
  ) AS c
),
candidates AS (
  SELECT f.*, f.base + row_number() OVER (PARTITION BY f.task, f.limit_key ORDER BY f.priority, f.available_at, f.seq) / f.weight AS turn
  FROM found AS f
),
-- Each task's room (its rate limit, a task-wide concurrency) goes to the earliest turns.
picked AS (
  SELECT o.* FROM (
    SELECT o.*, row_number() OVER (PARTITION BY o.task ORDER BY o.turn, o.served_at, o.priority, o.available_at, o.seq) AS nth_task
    FROM candidates AS o
  ) AS o
  JOIN task_room AS r ON r.task = o.task
  WHERE o.nth_task <= r.n
  ORDER BY o.turn, o.served_at, o.priority, o.available_at, o.seq
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
            j.tenant_id, j.request_id, j.trace, nullif(j.errors, '[]'::jsonb) AS errors, j.timeout_ms, j.flow
),
-- The keys served move on by the turns they took. Each key row is found by every column of the turn index (its turn
-- and served_at as read above, unchanged since: the row is locked): by (queue, task, limit_key) alone the planner
-- may pick that index, where limit_key comes last, and read every key of the task for each key served.
turned AS (
  UPDATE jfast_fair_keys AS fk
  SET turn = m.turn, served_at = clock_timestamp()
  FROM (
    SELECT p.task, p.limit_key, p.base, p.served_at, max(p.turn) AS turn
    FROM picked AS p JOIN claimed AS c ON c.id = p.id
    GROUP BY p.task, p.limit_key, p.base, p.served_at
  ) AS m
  WHERE fk.queue = $1 AND fk.task = m.task AND fk.turn = m.base AND fk.served_at = m.served_at AND fk.limit_key = m.limit_key
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
        NULL::text AS empty_key
 FROM claimed ORDER BY priority, available_at, seq)
UNION ALL
(SELECT NULL, task, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, limit_key FROM keys WHERE NOT due)
