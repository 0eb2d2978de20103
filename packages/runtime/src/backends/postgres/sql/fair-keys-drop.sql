-- The pruner's second step (docs/flow-control.md#pruning-per-key-state), after prune-fair-keys-lock.sql in its
-- transaction: the keys it found with no open job leave jfast_fair_keys, their last turn kept in jfast_key_turns for
-- when they come back (fair-place.sql starts them from it). A fresh snapshot, and the rows still locked: a job an
-- enqueue committed meanwhile keeps its key.
-- params: $1 queue, $2 tasks text[], $3 keys text[]
-- result: none
-- index:  jfast_fair_keys_pkey; jfast_jobs_limit_key_idx
WITH gone AS (
  DELETE FROM jfast_fair_keys AS fk
  -- Each key probed for an open job by one index lookup, in a subquery of its own (OFFSET 0): as a NOT EXISTS in the
  -- WHERE, the planner may join it against every open job of the queue instead.
  USING unnest($2::text[], $3::text[]) AS e(task, limit_key)
  CROSS JOIN LATERAL (
    SELECT NOT EXISTS (
      SELECT 1 FROM jfast_jobs AS o
      WHERE o.queue = $1 AND o.task = e.task AND o.limit_key = e.limit_key AND o.phase = 'open'
    ) AS empty
    OFFSET 0
  ) AS p
  WHERE fk.queue = $1 AND fk.task = e.task AND fk.limit_key = e.limit_key AND p.empty
  RETURNING fk.task, fk.limit_key, fk.turn, fk.served_at
)
INSERT INTO jfast_key_turns AS t (queue, task, limit_key, served, served_at)
SELECT $1, g.task, g.limit_key, g.turn, nullif(g.served_at, '-infinity') FROM gone AS g
ON CONFLICT (queue, task, limit_key) DO UPDATE SET served = excluded.served, served_at = excluded.served_at
