-- Claims jobs of tasks whose jobs carry a key (docs/flow-control.md): per-key concurrency, per-key rate limits,
-- order per key and fair share across keys, after claim-limits-lock.sql locked their limit rows in this transaction. The task's distinct open keys
-- are walked one index probe each (a recursive skip scan, never the jobs behind a key). Per key, what may start is
-- its concurrency less its slots still running (`per_key`), and its rate limit less its starts in the window
-- (jfast_key_starts), oldest due jobs first; an `ordered` key's head only (its oldest open job by enqueue order,
-- when it is due and not running), and none while a dead job of the key blocks it (on_dead 'block'); a job over its key's limit is
-- not touched (it stays ready, its attempt unspent) and other keys' jobs are claimed past it. A `fair` task's keys
-- take turns: each key's next job is placed at its virtual time (jfast_key_turns.served, never behind the least
-- served key) plus 1/weight per job, and the claim takes the earliest turns, reading jobs of at most $2 keys.
-- A task-wide concurrency (not per key) and rate limit hold for the task as a whole. The rest is
-- claim-limited.sql's: a lost lease's attempt recorded, dead when it was the last one; slots freed and taken.
-- params: $1 queue, $2 limit, $3 worker id, $4 lease in ms, $5 worker-lost error (jsonb), $6 locked keyed tasks text[]
-- result: the claimed rows as claim.sql returns them, in claim order
-- index:  jfast_jobs_limit_key_idx (keys, then each key's due jobs); jfast_task_slots_key_idx;
--         jfast_jobs_limit_key_order_idx and jfast_jobs_limit_key_dead_idx (ordered); jfast_key_turns_pkey; jfast_jobs_pkey
WITH RECURSIVE lim AS (
  SELECT task, concurrency, per_key, fair, weights, rate_max, rate_per_ms, starts, key_rate_max, key_rate_per_ms, ordered, on_dead
  FROM jfast_task_limits WHERE queue = $1 AND task = ANY($6::text[]) AND (per_key OR fair OR ordered OR key_rate_max IS NOT NULL)
),
task_room AS (
  SELECT lim.task, lim.concurrency, lim.per_key, lim.fair, lim.weights, lim.key_rate_max, lim.key_rate_per_ms, lim.ordered, lim.on_dead, LEAST(
    $2::integer,
    coalesce(lim.rate_max - (
      SELECT count(*)::integer FROM unnest(lim.starts) AS t(at) WHERE t.at > statement_timestamp() - lim.rate_per_ms * interval '1 millisecond'
    ), $2::integer),
    CASE WHEN lim.per_key OR lim.concurrency IS NULL THEN $2::integer ELSE lim.concurrency - (
      SELECT count(*)::integer FROM jfast_task_slots AS s JOIN jfast_jobs AS j ON j.id = s.job_id
      WHERE s.queue = $1 AND s.task = lim.task AND j.state = 'running' AND j.locked_until >= now()
    ) END
  ) AS n
  FROM lim
),
keys AS (
  SELECT r.task, k.limit_key
  FROM task_room AS r
  CROSS JOIN LATERAL (
    SELECT limit_key FROM jfast_jobs
    WHERE queue = $1 AND task = r.task AND phase = 'open' AND limit_key IS NOT NULL
    ORDER BY limit_key LIMIT 1
  ) AS k
  WHERE r.n > 0
  UNION ALL
  SELECT keys.task, (
    SELECT j.limit_key FROM jfast_jobs AS j
    WHERE j.queue = $1 AND j.task = keys.task AND j.phase = 'open' AND j.limit_key IS NOT NULL AND j.limit_key > keys.limit_key
    ORDER BY j.limit_key LIMIT 1
  )
  FROM keys WHERE keys.limit_key IS NOT NULL
),
allowance AS (
  SELECT keys.task, keys.limit_key, r.fair, r.ordered,
         coalesce((r.weights ->> keys.limit_key)::double precision, 1) AS weight,
         LEAST(
           CASE WHEN r.per_key THEN r.concurrency - (
             SELECT count(*)::integer FROM jfast_task_slots AS s JOIN jfast_jobs AS j ON j.id = s.job_id
             WHERE s.queue = $1 AND s.task = keys.task AND s.limit_key = keys.limit_key AND j.state = 'running' AND j.locked_until >= now()
           ) ELSE r.n END,
           coalesce(r.key_rate_max - (
             SELECT count(*)::integer FROM jfast_key_starts AS ks, unnest(ks.starts) AS t(at)
             WHERE ks.queue = $1 AND ks.task = keys.task AND ks.limit_key = keys.limit_key
               AND t.at > statement_timestamp() - r.key_rate_per_ms * interval '1 millisecond'
           ), r.n),
           CASE WHEN NOT r.ordered THEN r.n
                WHEN r.on_dead = 'block' AND EXISTS (
                  SELECT 1 FROM jfast_jobs AS x
                  WHERE x.queue = $1 AND x.task = keys.task AND x.limit_key = keys.limit_key AND x.phase = 'dead'
                ) THEN 0
                ELSE 1 END
         ) AS n,
         t.served, t.served_at
  FROM keys
  JOIN task_room AS r ON r.task = keys.task
  LEFT JOIN jfast_key_turns AS t ON t.queue = $1 AND t.task = keys.task AND t.limit_key = keys.limit_key
  WHERE keys.limit_key IS NOT NULL
),
least_served AS (
  SELECT task, min(served) AS v FROM allowance GROUP BY task
),
-- Per task, the keys with room and a due job, earliest turn first; no more than $2 of them can get a job now.
turns AS (
  SELECT * FROM (
    SELECT a.*, greatest(coalesce(a.served, ls.v, 0), coalesce(ls.v, 0)) AS base,
           row_number() OVER (
             PARTITION BY a.task
             ORDER BY CASE WHEN a.fair THEN greatest(coalesce(a.served, ls.v, 0), coalesce(ls.v, 0)) + 1 / a.weight ELSE 0 END, a.served_at NULLS FIRST, a.limit_key
           ) AS place
    FROM allowance AS a JOIN least_served AS ls ON ls.task = a.task
    WHERE a.n > 0 AND EXISTS (
      SELECT 1 FROM jfast_jobs AS d
      WHERE d.queue = $1 AND d.task = a.task AND d.limit_key = a.limit_key AND d.phase = 'open' AND d.available_at <= now()
        AND (d.state = 'ready' OR d.locked_until < now() OR d.locked_until IS NULL)
    )
  ) AS ranked
  WHERE ranked.place <= $2::integer OR NOT ranked.fair
),
found AS (
  SELECT c.ctid, c.id, c.task, c.limit_key, c.state, c.attempts, c.max_attempts, c.priority, c.available_at, c.seq,
         a.fair, a.base, a.weight, a.served_at
  FROM turns AS a
  CROSS JOIN LATERAL (
    SELECT ctid, id, task, limit_key, state, attempts, max_attempts, priority, available_at, seq
    FROM jfast_jobs
    WHERE NOT a.ordered AND queue = $1 AND task = a.task AND limit_key = a.limit_key AND phase = 'open' AND available_at <= now()
      AND (state = 'ready' OR locked_until < now() OR locked_until IS NULL)
    ORDER BY priority, available_at, seq
    LIMIT LEAST(a.n, $2::integer)
    FOR UPDATE SKIP LOCKED
  ) AS c
  UNION ALL
  -- An ordered key's head, locked without skipping: a head being settled right now is waited for, never
  -- stepped over to the job behind it.
  SELECT h.ctid, h.id, h.task, h.limit_key, h.state, h.attempts, h.max_attempts, h.priority, h.available_at, h.seq,
         a.fair, a.base, a.weight, a.served_at
  FROM turns AS a
  CROSS JOIN LATERAL (
    SELECT ctid, id, task, limit_key, state, attempts, max_attempts, priority, available_at, seq, locked_until
    FROM jfast_jobs
    WHERE a.ordered AND queue = $1 AND task = a.task AND limit_key = a.limit_key AND phase = 'open'
    ORDER BY seq
    LIMIT 1
    FOR UPDATE
  ) AS h
  WHERE h.available_at <= now() AND (h.state = 'ready' OR h.locked_until < now() OR h.locked_until IS NULL)
),
candidates AS (
  SELECT f.*, row_number() OVER (PARTITION BY f.task, f.limit_key ORDER BY f.priority, f.available_at, f.seq) AS nth
  FROM found AS f
),
ordered AS (
  SELECT c.*, CASE WHEN c.fair THEN c.base + c.nth / c.weight ELSE 0 END AS turn FROM candidates AS c
),
-- Each task's room (its rate limit, a task-wide concurrency) is shared by its keys, earliest turns first.
picked AS (
  SELECT o.* FROM (
    SELECT o.*, row_number() OVER (PARTITION BY o.task ORDER BY o.turn, o.served_at NULLS FIRST, o.priority, o.available_at, o.seq) AS nth_task
    FROM ordered AS o
  ) AS o
  JOIN task_room AS r ON r.task = o.task
  WHERE o.nth_task <= r.n
  ORDER BY o.turn, o.served_at NULLS FIRST, o.priority, o.available_at, o.seq
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
-- A fair task's keys move on by the turns they took.
turned AS (
  INSERT INTO jfast_key_turns AS t (queue, task, limit_key, served, served_at)
  SELECT $1, p.task, p.limit_key, max(p.turn), clock_timestamp()
  FROM picked AS p JOIN claimed AS c ON c.id = p.id
  WHERE p.fair
  GROUP BY p.task, p.limit_key
  ON CONFLICT (queue, task, limit_key) DO UPDATE SET served = excluded.served, served_at = excluded.served_at
),
-- Each key's starts within its window, with the ones made now (a task with a per-key rate limit).
key_started AS (
  INSERT INTO jfast_key_starts AS ks (queue, task, limit_key, starts)
  SELECT $1, c.task, c.limit_key, array_agg(statement_timestamp())
  FROM claimed AS c JOIN lim ON lim.task = c.task
  WHERE lim.key_rate_max IS NOT NULL
  GROUP BY c.task, c.limit_key
  ON CONFLICT (queue, task, limit_key) DO UPDATE
  SET starts = ARRAY(
    SELECT at FROM (
      SELECT t.at FROM unnest(ks.starts) AS t(at), jfast_task_limits AS l
      WHERE l.queue = ks.queue AND l.task = ks.task AND t.at > statement_timestamp() - l.key_rate_per_ms * interval '1 millisecond'
      UNION ALL
      SELECT unnest(excluded.starts)
    ) AS w ORDER BY at
  )
),
-- As in claim-limited.sql: slots whose job no longer runs go, the jobs claimed now take one with their key.
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
SELECT id, task, priority, payload, attempts, max_attempts, available_at, created_at, tenant_id, request_id, trace, errors, timeout_ms, flow
FROM claimed ORDER BY priority, available_at, seq
