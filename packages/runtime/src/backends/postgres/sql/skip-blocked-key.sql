-- Skips a blocked key (docs/flow-control.md#order-per-key): its dead jobs stay dead letters but no longer hold the
-- key: their key is moved aside (the key and a "\x01skipped" mark), so the key's next job can start, and a skipped
-- job retried later runs under that key of its own, holding nothing.
-- params: $1 queue, $2 task, $3 key
-- result: rows { id }, the dead jobs that held the key
-- index:  jfast_jobs_limit_key_dead_idx
UPDATE jfast_jobs SET limit_key = limit_key || chr(1) || 'skipped'
WHERE queue = $1 AND task = $2 AND limit_key = $3 AND phase = 'dead'
RETURNING id
