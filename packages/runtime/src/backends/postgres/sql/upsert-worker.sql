-- A worker's heartbeat in the registry (docs/worker.md#the-worker-registry): its row written or replaced, and the
-- queue's rows forgotten by now (heartbeat older than their forget_after_ms) deleted in the same statement.
-- params: $1 queue, $2 id, $3 host, $4 pid, $5 version, $6 named queue, $7 concurrency, $8 started_at,
--         $9 heartbeat_at, $10 running text[], $11 heartbeat_ms, $12 forget_after_ms
-- result: none
-- index:  jfast_workers_pkey (the table holds a row per worker: the forgotten ones are found by reading the queue's)
WITH forgotten AS (
  DELETE FROM jfast_workers
  WHERE queue = $1 AND id <> $2 AND heartbeat_at < $9::timestamptz - make_interval(secs => forget_after_ms / 1000.0)
)
INSERT INTO jfast_workers AS w (queue, id, host, pid, version, named_queue, concurrency, started_at, heartbeat_at, running, heartbeat_ms, forget_after_ms)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::text[], $11, $12)
ON CONFLICT (queue, id) DO UPDATE
SET host = excluded.host, pid = excluded.pid, version = excluded.version, named_queue = excluded.named_queue,
    concurrency = excluded.concurrency, started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at,
    running = excluded.running, heartbeat_ms = excluded.heartbeat_ms, forget_after_ms = excluded.forget_after_ms
