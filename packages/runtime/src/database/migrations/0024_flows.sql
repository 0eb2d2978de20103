-- Flows and batches on the PostgreSQL queue (docs/flows.md, docs/postgres.md#flows). A step is a job row with its
-- place in the flow beside it; a plain job has NULL in every flow column (adding them rewrites nothing):
--   flow          the step's JobFlow (core/flow.ts: id, step name, after, onParentFailure, batch), as the job shows it
--   flow_id       the flow's id, for the flow's views and cancelFlow (jfast_jobs_flow_idx)
--   flow_children the job ids of the steps that run after this one: its outcome counts once for each of them
--   flow_pending  how many of its parents have not finished yet; the step is 'waiting' until it reaches 0
--   flow_counted  its death was counted for its onParentFailure = "run" children, so its completion after a
--                 retry does not count them again
ALTER TABLE jfast_jobs
  ADD COLUMN flow jsonb,
  ADD COLUMN flow_id text,
  ADD COLUMN flow_children text[],
  ADD COLUMN flow_pending integer,
  ADD COLUMN flow_counted boolean NOT NULL DEFAULT false;

-- A new state, 'waiting': a step whose parents have not all finished. Its phase is the state itself (0013), so it
-- is outside the open index: no claim, depth or next-due look-up reads it. NOT VALID as in 0017.
ALTER TABLE jfast_jobs DROP CONSTRAINT jfast_jobs_state_check;
ALTER TABLE jfast_jobs ADD CONSTRAINT jfast_jobs_state_check
  CHECK (state IN ('waiting', 'ready', 'running', 'completed', 'dead', 'cancelled')) NOT VALID;

-- Partial: plain jobs add no entry. The waiting steps are listed with the scheduled jobs (list-scheduled.sql).
CREATE INDEX jfast_jobs_flow_idx ON jfast_jobs (flow_id) WHERE flow_id IS NOT NULL;
CREATE INDEX jfast_jobs_waiting_idx ON jfast_jobs (queue, available_at, seq) WHERE phase = 'waiting';

-- One row per flow: its counters move in the statement that writes a step's outcome (complete-flow.sql, and the
-- trigger below for a death or a dead step retried), so a flow's state is read from here without counting steps.
-- seq orders the list newest first (list-flows.sql).
CREATE TABLE jfast_flows (
  id          text PRIMARY KEY,
  queue       text NOT NULL,
  name        text,
  kind        text NOT NULL CHECK (kind IN ('flow', 'batch')),
  tenant_id   text,
  created_at  timestamptz NOT NULL,
  finished_at timestamptz,
  total       integer NOT NULL,
  completed   integer NOT NULL DEFAULT 0,
  dead        integer NOT NULL DEFAULT 0,
  cancelled   boolean NOT NULL DEFAULT false,
  seq         bigint GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX jfast_flows_list_idx ON jfast_flows (queue, seq DESC);

-- A step's death has three writers (kill.sql; claim.sql, for a lease expired on the last attempt; quarantine.sql)
-- and its return from dead letters two (retry-dead.sql, retry-dead-all.sql). One row trigger keeps the flow's
-- bookkeeping for all of them, in the statement that moves the row: the flow's dead count, and at the step's first
-- death one count for each child declared onParentFailure = "run" (a child made ready there is found by the next
-- claim or poll: no NOTIFY from here). Its WHEN is read for rows whose state a statement sets (claims,
-- completions) and is false at once for a plain job: no call, no event queued. Schema written in as in 0014.
DO $migration$
BEGIN
  EXECUTE format($function$
CREATE OR REPLACE FUNCTION %1$I.jfast_flow_step_dead() RETURNS trigger
LANGUAGE plpgsql
AS $body$
BEGIN
  IF NEW.state = 'dead' THEN
    -- The children before the flow's row, as complete-flow.sql locks them: the other order could deadlock with it.
    IF NOT NEW.flow_counted THEN
      UPDATE %1$I.jfast_jobs SET flow_counted = true WHERE id = NEW.id;
      PERFORM 1 FROM %1$I.jfast_jobs
      WHERE id = ANY (NEW.flow_children) AND state = 'waiting' AND flow->>'onParentFailure' = 'run'
      ORDER BY id
      FOR UPDATE;
      UPDATE %1$I.jfast_jobs
      SET flow_pending = flow_pending - 1,
          state = CASE WHEN flow_pending > 1 THEN 'waiting' ELSE 'ready' END
      WHERE id = ANY (NEW.flow_children) AND state = 'waiting' AND flow->>'onParentFailure' = 'run';
    END IF;
    UPDATE %1$I.jfast_flows SET dead = dead + 1 WHERE id = NEW.flow_id;
  ELSE
    UPDATE %1$I.jfast_flows SET dead = dead - 1 WHERE id = NEW.flow_id AND dead > 0;
  END IF;
  RETURN NULL;
END
$body$
  $function$, current_schema());
END
$migration$;

CREATE TRIGGER jfast_jobs_flow_dead
  AFTER UPDATE OF state ON jfast_jobs
  FOR EACH ROW
  WHEN (NEW.flow_id IS NOT NULL AND (OLD.state = 'dead') <> (NEW.state = 'dead'))
  EXECUTE FUNCTION jfast_flow_step_dead();
