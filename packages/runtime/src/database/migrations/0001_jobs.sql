-- The job table of the PostgreSQL queue. One row per job for its whole life: finished rows stay
-- (state completed / dead), so every hot query reads through a partial index that only holds the rows
-- it can return. A million finished rows never enter those indexes.
CREATE TABLE jfast_jobs (
  id           text PRIMARY KEY,
  -- Tie-breaker for jobs due at the same instant: enqueue order.
  seq          bigint GENERATED ALWAYS AS IDENTITY,
  queue        text NOT NULL,
  task         text NOT NULL,
  -- json, not jsonb: the payload comes back byte for byte (key order, number spelling).
  payload      json NOT NULL,
  state        text NOT NULL DEFAULT 'ready' CHECK (state IN ('ready', 'running', 'completed', 'dead')),
  attempts     integer NOT NULL DEFAULT 0,
  max_attempts integer,
  available_at timestamptz NOT NULL DEFAULT now(),
  created_at   timestamptz NOT NULL DEFAULT now(),
  tenant_id    text,
  request_id   text,
  trace        jsonb,
  errors       jsonb NOT NULL DEFAULT '[]',
  timeout_ms   bigint,
  locked_by    text,
  locked_until timestamptz,
  claimed_at   timestamptz,
  finished_at  timestamptz,
  died_at      timestamptz
);

-- Claim, part 1: ready jobs whose time has come, in order of availability then enqueueing.
-- The predicate is exactly the claim's `state = 'ready'`; delayed jobs sit in it too and are cut off by
-- the range condition on available_at, which is the second key.
CREATE INDEX jfast_jobs_ready_idx ON jfast_jobs (queue, available_at, seq) WHERE state = 'ready';

-- Claim, part 2: running jobs whose lease expired (their worker vanished). Also answers an idle worker's
-- "when does the next lease expire" so it wakes up for it.
CREATE INDEX jfast_jobs_lease_idx ON jfast_jobs (queue, locked_until) WHERE state = 'running';

-- Dead letters, newest death first.
CREATE INDEX jfast_jobs_dead_idx ON jfast_jobs (queue, died_at DESC, seq DESC) WHERE state = 'dead';

-- /ready reports the number of dead letters on every probe. Counting a million dead rows per probe is
-- what we must not do, so the count is kept here, adjusted by triggers on each transition into or out of
-- `dead` (rare events: a death, a retry, a discard). Ordinary claims and completions never fire them.
CREATE TABLE jfast_queue_counters (
  queue text PRIMARY KEY,
  dead  bigint NOT NULL DEFAULT 0
);

-- SET search_path FROM CURRENT pins the schema the function was created in, so a session with another
-- search_path (psql, a migration tool) still updates this schema's counters.
CREATE FUNCTION jfast_count_dead() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.state = 'dead' THEN
    UPDATE jfast_queue_counters SET dead = dead - 1 WHERE queue = OLD.queue;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.state = 'dead' THEN
    INSERT INTO jfast_queue_counters (queue, dead) VALUES (NEW.queue, 1)
    ON CONFLICT (queue) DO UPDATE SET dead = jfast_queue_counters.dead + 1;
  END IF;
  RETURN NULL;
END
$$;

CREATE FUNCTION jfast_reset_counters() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
  DELETE FROM jfast_queue_counters;
  RETURN NULL;
END
$$;

-- WHEN clauses keep the cost at zero for every transition that does not touch `dead`.
CREATE TRIGGER jfast_jobs_dead_on_insert AFTER INSERT ON jfast_jobs
  FOR EACH ROW WHEN (NEW.state = 'dead') EXECUTE FUNCTION jfast_count_dead();
CREATE TRIGGER jfast_jobs_dead_on_update AFTER UPDATE OF state ON jfast_jobs
  FOR EACH ROW WHEN ((OLD.state = 'dead') IS DISTINCT FROM (NEW.state = 'dead')) EXECUTE FUNCTION jfast_count_dead();
CREATE TRIGGER jfast_jobs_dead_on_delete AFTER DELETE ON jfast_jobs
  FOR EACH ROW WHEN (OLD.state = 'dead') EXECUTE FUNCTION jfast_count_dead();
CREATE TRIGGER jfast_jobs_counters_on_truncate AFTER TRUNCATE ON jfast_jobs
  FOR EACH STATEMENT EXECUTE FUNCTION jfast_reset_counters();
