-- Places due jobs of fair tasks (docs/flow-control.md#fair-share-across-keys) that wait for a turn (fair_turn
-- 'Infinity'): each key's jobs take its next turns, 1/weight apart, the first never behind the task's least waiting
-- turn (the lowest turn of a ready job; with none waiting, the last turn placed), so a key that arrives or comes back
-- starts level with the keys waiting, with no catching up on turns it did not take. The key's last turn is kept in
-- jfast_fair_keys (locked, in key order, so two placements of one key follow each other); a key pruned from it
-- starts from its count in jfast_key_turns. Run by the enqueue, in its transaction, for the jobs it stored due
-- ($4, read by id); by the claim for any due job waiting (a delayed job come due, a retry's backoff, a dead letter
-- retried), the oldest due first, locked so two claimers place different ones.
-- params: $1 queue, $2 fair tasks text[], $3 how many jobs at most, $4 job ids text[] (the enqueue's) or NULL
-- result: one row { placed }
-- index:  jfast_jobs_fair_idx (the waiting jobs; the least waiting turn); jfast_jobs_pkey (the enqueue's jobs);
--         jfast_fair_keys_pkey; jfast_key_turns_pkey; jfast_fair_keys_last_idx (the last turn placed)
WITH lim AS (
  SELECT task, weights FROM jfast_task_limits WHERE queue = $1 AND task = ANY($2::text[]) AND fair
),
due AS (
  SELECT j.id, j.task, j.limit_key, j.priority, j.available_at, j.seq
  FROM lim
  CROSS JOIN LATERAL (
    SELECT id, task, limit_key, priority, available_at, seq
    FROM jfast_jobs
    WHERE $4::text[] IS NULL AND queue = $1 AND task = lim.task AND phase = 'open'
      AND fair_turn = 'Infinity'::double precision AND available_at <= now()
    ORDER BY available_at, seq
    LIMIT $3
    FOR UPDATE SKIP LOCKED
  ) AS j
  UNION ALL
  -- By id, one primary-key lookup each (the enqueue's own rows, not locked by anyone else).
  SELECT j.id, j.task, j.limit_key, j.priority, j.available_at, j.seq
  FROM unnest($4::text[]) AS e(id)
  CROSS JOIN LATERAL (
    SELECT id, task, limit_key, priority, available_at, seq
    FROM jfast_jobs
    WHERE id = e.id AND queue = $1 AND task = ANY($2::text[]) AND phase = 'open'
      AND fair_turn = 'Infinity'::double precision AND available_at <= clock_timestamp()
  ) AS j
),
counts AS (
  SELECT d.task, d.limit_key, count(*) AS n, coalesce((lim.weights ->> d.limit_key)::double precision, 1) AS weight
  FROM due AS d JOIN lim ON lim.task = d.task
  GROUP BY d.task, d.limit_key, lim.weights
  ORDER BY d.task, d.limit_key
),
-- Once per task (materialized: inlined, it ran for each key). The least waiting turn passes over the jobs running.
frontier AS MATERIALIZED (
  SELECT t.task, coalesce(
    (SELECT f.fair_turn FROM jfast_jobs AS f
     WHERE f.queue = $1 AND f.task = t.task AND f.phase = 'open' AND f.fair_turn < 'Infinity'::double precision AND f.state = 'ready'
     ORDER BY f.fair_turn LIMIT 1),
    (SELECT max(k.turn) FROM jfast_fair_keys AS k WHERE k.queue = $1 AND k.task = t.task),
    0) AS turn
  FROM (SELECT DISTINCT task FROM counts) AS t
),
-- Each key's last turn, its row locked (in key order, so two placements of one key follow each other, and see each
-- other's turn once the earlier commits), else its count kept when the pruner dropped it. One lookup each.
keys AS (
  SELECT c.task, c.limit_key, c.n, c.weight,
         greatest(coalesce(l.turn, t.served, '-Infinity'::double precision), fr.turn - 1 / c.weight) AS base
  FROM counts AS c
  JOIN frontier AS fr ON fr.task = c.task
  LEFT JOIN LATERAL (
    SELECT fk.turn FROM jfast_fair_keys AS fk
    WHERE fk.queue = $1 AND fk.task = c.task AND fk.limit_key = c.limit_key
      -- Redundant, and an index condition of the primary key only: on stale statistics the planner may otherwise
      -- take jfast_fair_keys_last_idx and read every key of the task for each key.
      AND (fk.queue, fk.task, fk.limit_key) >= ($1, c.task, c.limit_key)
    FOR UPDATE
  ) AS l ON true
  LEFT JOIN LATERAL (
    SELECT kt.served FROM jfast_key_turns AS kt
    WHERE kt.queue = $1 AND kt.task = c.task AND kt.limit_key = c.limit_key
    OFFSET 0 -- a lookup per key: joined instead, it may read every turn count of the queue for each key
  ) AS t ON true
),
-- A key new to the table that another placement adds at the same moment keeps the later of the two last turns
-- (their jobs may then share turns, the earlier enqueued going first).
kept AS (
  INSERT INTO jfast_fair_keys AS fk (queue, task, limit_key, turn)
  SELECT $1, k.task, k.limit_key, k.base + k.n / k.weight FROM keys AS k
  ORDER BY k.task, k.limit_key
  ON CONFLICT (queue, task, limit_key) DO UPDATE SET turn = greatest(fk.turn, excluded.turn)
),
turns AS (
  SELECT d.id, k.base + row_number() OVER (PARTITION BY d.task, d.limit_key ORDER BY d.priority, d.available_at, d.seq) / k.weight AS turn
  FROM due AS d JOIN keys AS k ON k.task = d.task AND k.limit_key = d.limit_key
),
placed AS (
  UPDATE jfast_jobs AS j
  SET fair_turn = t.turn
  FROM turns AS t
  WHERE j.id = t.id
  RETURNING 1
)
SELECT count(*)::integer AS placed FROM placed
