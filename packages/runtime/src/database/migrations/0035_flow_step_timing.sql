-- A RabbitMQ flow step's duration (docs/rabbitmq.md#flows): when its last attempt started and how long its handler
-- ran, from the attempt's record the worker hands to the step's outcome, written by the write of that outcome that
-- already happens (complete-flow-step.sql, die-flow-step.sql), so that flows.get shows each step's startedAt and
-- durationMs as the other queues do. Two nullable columns (adding them rewrites nothing); null before the step
-- ended, and for steps ended by a process older than this migration.
ALTER TABLE jfast_flow_steps ADD COLUMN started_at timestamptz, ADD COLUMN duration_ms double precision;
