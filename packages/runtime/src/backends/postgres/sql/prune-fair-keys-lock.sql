-- The pruner (docs/flow-control.md#pruning-per-key-state), first step: up to $2 keys of fair tasks left in turn order
-- with no open job (their jobs cancelled, deleted or dead since the last claim that served them), locked in the
-- pruner's transaction. A key a claim or an enqueue holds now is skipped, never waited for; fair-keys-drop.sql then
-- drops them with a fresh snapshot, so a job an enqueue committed meanwhile keeps its key.
-- params: $1 queue, $2 how many at most
-- result: rows { task, limit_key }
-- index:  jfast_fair_keys_pkey; jfast_jobs_limit_key_order_idx (one probe per key)
SELECT fk.task, fk.limit_key
FROM jfast_fair_keys AS fk
WHERE fk.queue = $1
  AND NOT EXISTS (
    SELECT 1 FROM jfast_jobs AS o
    WHERE o.queue = $1 AND o.task = fk.task AND o.limit_key = fk.limit_key AND o.phase = 'open'
  )
ORDER BY fk.task, fk.limit_key
LIMIT $2
FOR UPDATE OF fk SKIP LOCKED
