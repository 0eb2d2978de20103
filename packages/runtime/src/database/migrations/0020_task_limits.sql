-- Per-task limits (docs/tasks.md#limits): at most `concurrency` jobs of a task running at once and at most
-- `rate_max` starts in any `rate_per_ms` milliseconds, across every process of the queue.
--
-- One row per limited task of a queue, written by every process at start from the tasks it declares. A claim
-- locks the rows of the tasks it may start (FOR UPDATE SKIP LOCKED: a task another claimer is serving is skipped,
-- never waited for), then counts under that lock, so two claimers never both take the last slot. `starts` holds
-- the task's most recent starts, at most `rate_max` of them, oldest first: one more may start when it holds fewer,
-- or when its oldest left the window (a sliding window, exact, in one row).
CREATE TABLE jfast_task_limits (
  queue       text NOT NULL,
  task        text NOT NULL,
  concurrency integer CHECK (concurrency > 0),
  rate_max    integer CHECK (rate_max > 0),
  rate_per_ms bigint CHECK (rate_per_ms > 0),
  starts      timestamptz[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (queue, task)
);

-- The jobs holding a slot of a task with a concurrency limit. The PostgreSQL queue counts a slot while its job is
-- running under a live lease in jfast_jobs (a completed, retried, released or lease-expired job frees its slot by
-- itself, and the next claim of its task deletes the row); a queue whose jobs are not in this database (RabbitMQ)
-- counts it until `until`, a lease its worker extends and deletes when the job ends.
CREATE TABLE jfast_task_slots (
  queue   text NOT NULL,
  task    text NOT NULL,
  job_id  text NOT NULL,
  until   timestamptz,
  PRIMARY KEY (queue, task, job_id)
);
