-- The pruner (docs/flow-control.md#pruning-per-key-state): up to $2 keys' turn counts (jfast_key_turns) of keys with
-- no open job and not in a fair task's turn order; such a key that comes back starts level with the least served
-- key, as a new key does. A row a claim holds now is skipped, never waited for.
-- params: $1 queue, $2 how many at most
-- result: one row { deleted }
-- index:  jfast_key_turns_pkey; jfast_jobs_limit_key_order_idx and jfast_fair_keys_pkey (one probe each per key)
WITH gone AS (
  DELETE FROM jfast_key_turns AS t
  WHERE (t.queue, t.task, t.limit_key) IN (
    SELECT c.queue, c.task, c.limit_key
    FROM jfast_key_turns AS c
    WHERE c.queue = $1
      AND NOT EXISTS (
        SELECT 1 FROM jfast_jobs AS o
        WHERE o.queue = $1 AND o.task = c.task AND o.limit_key = c.limit_key AND o.phase = 'open'
      )
      AND NOT EXISTS (
        SELECT 1 FROM jfast_fair_keys AS f WHERE f.queue = $1 AND f.task = c.task AND f.limit_key = c.limit_key
      )
    ORDER BY c.task, c.limit_key
    LIMIT $2
    FOR UPDATE OF c SKIP LOCKED
  )
  RETURNING 1
)
SELECT count(*) AS deleted FROM gone
