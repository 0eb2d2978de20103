-- Stores the keys of keyed jobs just inserted, and places due jobs of fair tasks (docs/flow-control.md#fair-share-across-keys)
-- at their turns, in one statement and one new version of each row. Two callers:
--   * the enqueue, in the transaction of the insert ($4 ids, $5 their keys), so no claim ever sees one of them
--     without its key: every job gets its key (docs/flow-control.md#per-key-concurrency); a job of a fair task
--     (fairness alone: claim-fair.sql) also gets its turn when due, else waits for one ('Infinity');
--   * the claim ($4 and $5 NULL), for due jobs of fair tasks waiting for a turn (a delayed job come due, a retry's
--     backoff, a dead letter retried), the oldest due first, at most $3, locked so two claimers place different ones.
-- Each key's jobs take its next turns, 1/weight apart, the first never behind the task's least waiting turn (the
-- lowest turn of a ready job; with none waiting, the last turn placed), so a key that arrives or comes back starts
-- level with the keys waiting, with no catching up on turns it did not take. The key's last turn is kept in
-- jfast_fair_keys (locked, in key order, so two placements of one key follow each other); a key pruned from it
-- starts from its count in jfast_key_turns.
-- params: $1 queue, $2 tasks text[] (the enqueue's jobs' tasks; the claim's fair tasks), $3 how many jobs at most
--         (the claim), $4 job ids text[] or NULL, $5 their keys text[] or NULL
-- result: one row { placed }, the jobs written
-- index:  jfast_jobs_pkey (the enqueue's jobs); jfast_jobs_fair_idx (the waiting jobs; the least waiting turn);
--         jfast_task_limits_pkey; jfast_fair_keys_pkey; jfast_key_turns_pkey; jfast_fair_keys_last_idx
WITH lim AS (
  SELECT task, weights FROM jfast_task_limits
  WHERE queue = $1 AND task = ANY($2::text[]) AND fair AND NOT per_key AND on_dead IS NULL AND key_rate_max IS NULL
),
-- The jobs written: the enqueue's by id (one primary-key lookup each; its own rows), with the key to store and
-- whether they are a fair task's; or the claim's, waiting for a turn.
given AS (
  SELECT j.id, j.task, e.limit_key AS new_key, e.limit_key, j.priority, j.available_at, j.seq,
         j.task IN (SELECT task FROM lim) AS fair, j.available_at <= clock_timestamp() AS due
  FROM unnest($4::text[], $5::text[]) AS e(id, limit_key)
  CROSS JOIN LATERAL (
    SELECT id, task, priority, available_at, seq FROM jfast_jobs WHERE id = e.id AND queue = $1 AND limit_key IS NULL
  ) AS j
  UNION ALL
  SELECT j.id, j.task, NULL, j.limit_key, j.priority, j.available_at, j.seq, true, true
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
),
due AS (
  SELECT * FROM given WHERE fair AND due
),
-- Per key: its due jobs in the order they take turns, as arrays, so each job finds its turn below without a join
-- (the planner, seeing CTEs of one row, would loop over every key for every job).
counts AS (
  SELECT d.task, d.limit_key, count(*) AS n, coalesce((lim.weights ->> d.limit_key)::double precision, 1) AS weight,
         array_agg(d.id ORDER BY d.priority, d.available_at, d.seq) AS ids,
         array_agg(d.new_key ORDER BY d.priority, d.available_at, d.seq) AS new_keys
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
  SELECT c.task, c.limit_key, c.n, c.weight, c.ids, c.new_keys,
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
-- Every row written, with its key to store (the enqueue's) and its turn: the fair jobs due at theirs, a fair job due
-- later 'Infinity', any other job none.
writes AS (
  SELECT u.id, u.new_key, k.base + u.place / k.weight AS turn
  FROM keys AS k
  CROSS JOIN LATERAL unnest(k.ids, k.new_keys) WITH ORDINALITY AS u(id, new_key, place)
  UNION ALL
  SELECT g.id, g.new_key, CASE WHEN g.fair THEN 'Infinity'::double precision END
  FROM given AS g
  WHERE NOT (g.fair AND g.due)
),
placed AS (
  UPDATE jfast_jobs AS j
  SET limit_key = coalesce(w.new_key, j.limit_key), fair_turn = w.turn
  FROM writes AS w
  WHERE j.id = w.id
  RETURNING 1
)
SELECT count(*)::integer AS placed FROM placed
