-- Deadlines (docs/flow-control.md#deadlines): a job given `deadline` or `expiresInMs` that has not started by
-- then never runs and ends 'expired'. NULL for every other job: the column costs a plain row nothing.
ALTER TABLE jfast_jobs ADD COLUMN expires_at timestamptz;

-- A new state, 'expired'. Its phase is the state itself (0013), so it leaves the open index as a cancelled job
-- does. NOT VALID as in 0017.
ALTER TABLE jfast_jobs DROP CONSTRAINT jfast_jobs_state_check;
ALTER TABLE jfast_jobs ADD CONSTRAINT jfast_jobs_state_check
  CHECK (state IN ('waiting', 'ready', 'running', 'completed', 'dead', 'cancelled', 'expired')) NOT VALID;

-- The sweep for jobs with a deadline that no claim reached in time (expire-due.sql). Partial: a plain job adds no
-- entry, and a claim changes neither column, so claims stay HOT updates.
CREATE INDEX jfast_jobs_expiring_idx ON jfast_jobs (queue, expires_at) WHERE phase = 'open' AND expires_at IS NOT NULL;
-- Expired jobs are pruned like cancelled ones (prune-finished.sql), oldest first.
CREATE INDEX jfast_jobs_expired_idx ON jfast_jobs (queue, finished_at) WHERE phase = 'expired';

-- The outbox relay shares its claims round robin across tenants (docs/flow-control.md#outbox-and-events): each row
-- carries its tenant ('' for none), and the claim reads each due tenant's oldest rows from this index. A constant
-- default adds the column without a rewrite.
ALTER TABLE jfast_outbox ADD COLUMN tenant text NOT NULL DEFAULT '';
CREATE INDEX jfast_outbox_tenant_idx ON jfast_outbox (tenant, available_at, seq) WHERE state = 'pending';
