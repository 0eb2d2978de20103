-- Locks a limited task's row for take-limit-slot.sql, the next statement of the transaction (RabbitMQ;
-- docs/tasks.md#limits); concurrent takes of one task queue up here, and the slots they leave behind as expired
-- are deleted.
-- params: $1 queue, $2 task
-- result: rows { task } (none: the task has no limit any more)
-- index:  jfast_task_limits_pkey, jfast_task_slots_pkey
WITH expired AS (
  DELETE FROM jfast_task_slots WHERE queue = $1 AND task = $2 AND until < now()
)
SELECT task FROM jfast_task_limits WHERE queue = $1 AND task = $2 FOR UPDATE
