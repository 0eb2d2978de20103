-- Outcomes a handler chooses, and cancellation (docs/tasks.md#snoozing, docs/tasks.md#cancelling-a-job).
--
-- snoozes: how many times the job returned snooze(ms). A snooze gives its attempt back, so `attempts` cannot
-- count them; [plugin.queue] max_snoozes caps this. A constant default adds the column without a rewrite.
ALTER TABLE jfast_jobs ADD COLUMN snoozes integer NOT NULL DEFAULT 0;

-- A new state, 'cancelled'. Its phase is the state itself (the generated column of 0013), so a cancelled job
-- leaves the open index as a completed or dead one does, and no claim ever reads it again. NOT VALID skips the
-- scan of every existing row: each one passed the constraint this replaces, which allowed a subset of these.
ALTER TABLE jfast_jobs DROP CONSTRAINT jfast_jobs_state_check;
ALTER TABLE jfast_jobs ADD CONSTRAINT jfast_jobs_state_check
  CHECK (state IN ('ready', 'running', 'completed', 'dead', 'cancelled')) NOT VALID;

-- Cancellations a queue cannot apply to a job where it waits (RabbitMQ: a message cannot be taken out of the
-- middle of a queue). Each process of the service reads the rows added since its last read, about once a
-- second, and drops a cancelled job's message when it is delivered. seq orders them for that read.
CREATE TABLE jfast_cancelled_jobs (
  queue        text NOT NULL,
  id           text NOT NULL,
  seq          bigint GENERATED ALWAYS AS IDENTITY,
  cancelled_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (queue, id)
);
CREATE INDEX jfast_cancelled_jobs_seq_idx ON jfast_cancelled_jobs (queue, seq);
