-- Retention of finished jobs (docs/queues.md#retention): the pruner deletes completed and cancelled rows by the
-- time they finished, oldest first, in bounded batches. Without this index each batch would scan the table.
-- A completion already leaves the open index (its phase changes, so it is not a HOT update) and writes a new
-- primary-key entry; this adds one entry more. keep_completed = false deletes the row instead and pays neither.
-- Dead letters are pruned through jfast_jobs_dead_idx (0013), which already orders them by time of death.
CREATE INDEX jfast_jobs_finished_idx ON jfast_jobs (queue, phase, finished_at)
  WHERE phase IN ('completed', 'cancelled');

-- Leases that let one process at a time do a job every process may do: `name` is what is leased (the pruner of
-- one queue: 'prune:<queue>'), `owner` the process holding it until `expires_at` (the database's clock, so the
-- processes' clocks never disagree about it). Released by setting expires_at to now.
CREATE TABLE jfast_leases (
  name       text PRIMARY KEY,
  owner      text NOT NULL,
  expires_at timestamptz NOT NULL
);
