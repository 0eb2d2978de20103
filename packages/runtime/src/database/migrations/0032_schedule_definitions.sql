-- Schedules made at run time (admin API, CLI, dashboard), and the pause state of schedules declared in code
-- (spec null). Every process reads this table on each scheduler pass, so a change needs no restart.
CREATE TABLE jfast_schedule_definitions (
  name       text PRIMARY KEY,
  spec       jsonb,
  paused     boolean NOT NULL DEFAULT false,
  since      timestamptz NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  updated_by text
);
