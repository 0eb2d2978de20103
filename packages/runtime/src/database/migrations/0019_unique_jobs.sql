-- Unique jobs (docs/tasks.md#unique-jobs). Three nullable columns, set only on a unique job (adding them rewrites
-- nothing):
--   unique_key    the key scoped by task and tenant (core/unique.ts scopedUniqueKey), for a state-held key
--   unique_phases the phases in which the job holds it ('open' for ready or running, else the state itself)
--   unique_spec   the job's unique option as given ({ key, periodMs, states }), shown by the admin API
ALTER TABLE jfast_jobs ADD COLUMN unique_key text, ADD COLUMN unique_phases text[], ADD COLUMN unique_spec jsonb;

-- At most one job per key holds it: a second insert conflicts (enqueue-unique.sql, ON CONFLICT DO NOTHING), and
-- the key is free again the moment its holder leaves the phases it holds it in. The predicate reads `phase`, not
-- `state`: a claim (ready -> running) changes neither, so claims stay HOT updates (see 0013). Plain jobs have
-- no unique_phases and never enter the index; building it on an existing table reads it once.
CREATE UNIQUE INDEX jfast_jobs_unique_idx ON jfast_jobs (queue, unique_key)
  WHERE unique_phases IS NOT NULL AND phase = ANY (unique_phases);

-- Keys held outside jfast_jobs: for a period (the PostgreSQL queue, unique-periods.sql), and every unique key of
-- a queue whose jobs are not in this database (RabbitMQ, queue/unique-stores.ts). A row whose time has passed is
-- taken over by the next job of its key; a key held by state has expires_at 'infinity' and is deleted when its
-- job leaves `states` (the states it holds it in).
CREATE TABLE jfast_unique_keys (
  queue      text NOT NULL,
  key        text NOT NULL,
  job_id     text NOT NULL,
  expires_at timestamptz NOT NULL,
  states     text[],
  PRIMARY KEY (queue, key)
);
-- A job's end releases its key by the job's id (RabbitMQ: a cancellation knows only the id).
CREATE INDEX jfast_unique_keys_job_idx ON jfast_unique_keys (queue, job_id);
