-- The paused tasks of a queue, read by every process about once a second.
-- params: $1 queue
-- result: rows { task, paused_at, paused_by }
-- index:  jfast_paused_tasks_pkey (queue, task)
SELECT task, paused_at, paused_by FROM jfast_paused_tasks WHERE queue = $1 ORDER BY task
