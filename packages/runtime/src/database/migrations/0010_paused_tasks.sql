-- Paused tasks (docs/worker.md#pausing-a-task): a row means no worker of that queue may start a job of that
-- task. Every process reads the table about once a second and tells its claims which tasks to leave alone;
-- the jobs themselves are not touched, so resuming is deleting the row.
CREATE TABLE jfast_paused_tasks (
  queue     text NOT NULL,
  task      text NOT NULL,
  paused_at timestamptz NOT NULL DEFAULT now(),
  paused_by text,
  PRIMARY KEY (queue, task)
);
