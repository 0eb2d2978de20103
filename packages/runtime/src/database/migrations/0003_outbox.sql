-- Writes that must leave the database only if the caller's transaction commits, for destinations that
-- are not this database's job table (another queue backend, the event bus). A relay in every process
-- moves pending rows with FOR UPDATE SKIP LOCKED, retrying with backoff until max_attempts.
CREATE TABLE jfast_outbox (
  id           text PRIMARY KEY,
  seq          bigint GENERATED ALWAYS AS IDENTITY,
  -- 'job': body is a JobJSON for the queue named in destination; 'event': body is an event envelope
  -- for the topic named in destination.
  kind         text NOT NULL CHECK (kind IN ('job', 'event')),
  destination  text NOT NULL,
  body         json NOT NULL,
  headers      jsonb NOT NULL DEFAULT '{}',
  state        text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dead')),
  attempts     integer NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL DEFAULT 10,
  available_at timestamptz NOT NULL DEFAULT now(),
  created_at   timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz,
  died_at      timestamptz,
  errors       jsonb NOT NULL DEFAULT '[]'
);

-- The relay's claim: pending rows whose retry time has come, oldest first. Delivered rows stay out.
CREATE INDEX jfast_outbox_pending_idx ON jfast_outbox (available_at, seq) WHERE state = 'pending';
CREATE INDEX jfast_outbox_dead_idx ON jfast_outbox (died_at DESC) WHERE state = 'dead';
