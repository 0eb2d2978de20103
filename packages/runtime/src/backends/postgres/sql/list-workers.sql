-- The queue's registered workers not forgotten yet (docs/worker.md#the-worker-registry), as of $2 (the reader's
-- clock, which also judges gone ones); the forgotten rows are left to the next heartbeat's delete.
-- params: $1 queue, $2 now timestamptz
-- result: every column but queue
-- index:  jfast_workers_pkey
SELECT id, host, pid, version, named_queue, concurrency, started_at, heartbeat_at, running, heartbeat_ms, forget_after_ms
FROM jfast_workers
WHERE queue = $1 AND heartbeat_at >= $2::timestamptz - make_interval(secs => forget_after_ms / 1000.0)
ORDER BY id
