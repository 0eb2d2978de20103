-- Flows of a queue whose broker cannot hold a step back until its parents finish (RabbitMQ; docs/rabbitmq.md#flows).
-- The flow is a row of jfast_flows (0024) as on the PostgreSQL queue; its steps are rows here, the job of each kept
-- until it is published:
--   job           the step's stored JobJSON: what is published when it is ready; after an outcome, the job as it ended
--   children      the job ids of the steps after it: its outcome counts once for each of them
--   pending       how many of its parents have not finished yet; 'waiting' until it reaches 0
--   counted       its death was counted for its onParentFailure = "run" children (not again after a retry)
--   published     its message is in the broker (confirmed)
--   publish_after while ready and unpublished: when the sweep may publish it (the process that made it ready
--                 publishes it first; one that died before it did leaves it to the sweep)
CREATE TABLE jfast_flow_steps (
  job_id         text PRIMARY KEY,
  flow_id        text NOT NULL REFERENCES jfast_flows (id) ON DELETE CASCADE,
  queue          text NOT NULL,
  job            jsonb NOT NULL,
  children       text[] NOT NULL,
  pending        integer NOT NULL,
  counted        boolean NOT NULL DEFAULT false,
  state          text NOT NULL CHECK (state IN ('waiting', 'ready', 'completed', 'dead', 'cancelled')),
  published      boolean NOT NULL DEFAULT false,
  publish_after  timestamptz,
  result         jsonb,
  result_omitted text,
  finished_at    timestamptz
);
CREATE INDEX jfast_flow_steps_flow_idx ON jfast_flow_steps (flow_id);
-- The sweep's read: partial, so it holds only the few steps between being made ready and published.
CREATE INDEX jfast_flow_steps_unpublished_idx ON jfast_flow_steps (queue, publish_after) WHERE state = 'ready' AND NOT published;
