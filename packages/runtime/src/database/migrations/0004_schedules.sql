-- Ticks of recurring tasks. Every process runs the scheduler; the one whose INSERT of (name, tick)
-- succeeds enqueues that tick's job, the others hit the primary key and skip it.
CREATE TABLE jfast_schedules (
  name       text NOT NULL,
  tick       timestamptz NOT NULL,
  claimed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (name, tick)
);

-- Pruning old ticks.
CREATE INDEX jfast_schedules_claimed_at_idx ON jfast_schedules (claimed_at);
