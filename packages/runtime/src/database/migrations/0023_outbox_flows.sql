-- A flow written by outbox.flow in the caller's transaction while the queue is another backend (Redis, RabbitMQ
-- with the database) or another database: one row of kind 'flow' carries the whole checked plan, and the relay
-- hands it to the queue backend after commit (docs/flows.md#in-the-callers-transaction).
ALTER TABLE jfast_outbox DROP CONSTRAINT IF EXISTS jfast_outbox_kind_check;
ALTER TABLE jfast_outbox ADD CONSTRAINT jfast_outbox_kind_check CHECK (kind IN ('job', 'event', 'flow'));
