-- Per-key concurrency (docs/flow-control.md#per-key-concurrency): a task's `concurrency: { key, limit }` holds
-- for each key, computed when the job is enqueued and stored in `limit_key`.
--
-- jfast_jobs_limit_key_idx serves the claim of such a task (claim-keyed.sql): it walks the task's distinct open
-- keys (one index probe per key, never the jobs behind them) and reads each key's due jobs in claim order. Its
-- columns and predicate are ones a claim never changes, so a claim stays a HOT update; a plain job has no key and
-- is never in it.
ALTER TABLE jfast_jobs ADD COLUMN limit_key text;
CREATE INDEX jfast_jobs_limit_key_idx ON jfast_jobs (queue, task, limit_key, priority, available_at, seq)
  WHERE phase = 'open' AND limit_key IS NOT NULL;

-- A task's concurrency is per key: the claim counts the slots of each key, not of the task.
ALTER TABLE jfast_task_limits ADD COLUMN per_key boolean NOT NULL DEFAULT false;

-- The key of a slot of such a task, counted per key.
ALTER TABLE jfast_task_slots ADD COLUMN limit_key text;
CREATE INDEX jfast_task_slots_key_idx ON jfast_task_slots (queue, task, limit_key) WHERE limit_key IS NOT NULL;

-- Fair share across keys (docs/flow-control.md#fair-share-across-keys): a task with `fairness` has its jobs' keys
-- in `limit_key` too, and the claim lets keys take turns, weighted by `weights` (key → turns per round).
ALTER TABLE jfast_task_limits ADD COLUMN fair boolean NOT NULL DEFAULT false;
ALTER TABLE jfast_task_limits ADD COLUMN weights jsonb;

-- Each key's place in the turns of a fair task: `served` grows by 1/weight with each job of the key started (a
-- weighted round robin's virtual time); a key seen for the first time, or back after a pause, starts level with
-- the key served least, so neither a newcomer nor a returning key can take more than its turns.
CREATE TABLE jfast_key_turns (
  queue     text NOT NULL,
  task      text NOT NULL,
  limit_key text NOT NULL,
  served    double precision NOT NULL,
  -- When the key last took a turn: of two keys whose next turns tie, the one served longer ago goes first, so
  -- claims of one job each still alternate between them.
  served_at timestamptz,
  PRIMARY KEY (queue, task, limit_key)
);

-- Per-key rate limits (docs/flow-control.md#per-key-rate-limits): at most `key_rate_max` starts per key in any
-- `key_rate_per_ms`; each key's recent starts (at most key_rate_max of them, oldest first) in jfast_key_starts,
-- a sliding window in one row per key, as jfast_task_limits.starts is for the task.
ALTER TABLE jfast_task_limits ADD COLUMN key_rate_max integer CHECK (key_rate_max > 0);
ALTER TABLE jfast_task_limits ADD COLUMN key_rate_per_ms bigint CHECK (key_rate_per_ms > 0);
CREATE TABLE jfast_key_starts (
  queue     text NOT NULL,
  task      text NOT NULL,
  limit_key text NOT NULL,
  starts    timestamptz[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (queue, task, limit_key)
);

-- Order per key (docs/flow-control.md#order-per-key): a task with `orderedBy` runs one job of a key at a time, its
-- head (the oldest open job of the key, by enqueue order) first, whether it waits, runs or waits for a retry. A dead
-- job of the key holds the next ones while `on_dead` is 'block', until it is retried or skipped (its key cleared).
ALTER TABLE jfast_task_limits ADD COLUMN ordered boolean NOT NULL DEFAULT false;
ALTER TABLE jfast_task_limits ADD COLUMN on_dead text CHECK (on_dead IN ('block', 'skip'));
CREATE INDEX jfast_jobs_limit_key_order_idx ON jfast_jobs (queue, task, limit_key, seq)
  WHERE phase = 'open' AND limit_key IS NOT NULL;
CREATE INDEX jfast_jobs_limit_key_dead_idx ON jfast_jobs (queue, task, limit_key)
  WHERE phase = 'dead' AND limit_key IS NOT NULL;
