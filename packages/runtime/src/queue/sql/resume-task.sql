-- Resumes a task: its jobs were never moved, so they are claimable as soon as workers read the table again.
-- params: $1 queue, $2 task
-- result: one row { task } if the task was paused, none otherwise
-- index:  jfast_paused_tasks_pkey
DELETE FROM jfast_paused_tasks WHERE queue = $1 AND task = $2 RETURNING task
