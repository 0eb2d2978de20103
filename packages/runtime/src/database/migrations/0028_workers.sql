-- The worker registry (docs/worker.md#the-worker-registry): one row per worker process and named queue, written
-- by the worker's own timer every few seconds (never with a job's writes) and deleted when it shuts down cleanly.
-- A row whose heartbeat stopped is shown as gone, then deleted by the next write or read after forget_after_ms.
-- Tiny: one row per live (or recently gone) worker.
CREATE TABLE jfast_workers (
  queue           text NOT NULL,
  id              text NOT NULL,
  host            text NOT NULL,
  pid             integer NOT NULL,
  version         text NOT NULL,
  named_queue     text NOT NULL,
  concurrency     integer NOT NULL,
  started_at      timestamptz NOT NULL,
  heartbeat_at    timestamptz NOT NULL,
  running         text[] NOT NULL DEFAULT '{}',
  heartbeat_ms    integer NOT NULL,
  forget_after_ms bigint NOT NULL,
  PRIMARY KEY (queue, id)
);
