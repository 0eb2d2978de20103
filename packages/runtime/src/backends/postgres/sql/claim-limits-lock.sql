-- First statement of a claim in a queue with limited tasks (docs/tasks.md#limits), in the claim's transaction:
-- locks the limit rows of the tasks this claim may start, so that claim-limited.sql, the next statement, counts
-- under the lock with a snapshot taken after it (a count in the locking statement itself would read a snapshot
-- older than the lock, missing a claim committed meanwhile). A row another claimer holds is skipped: that claimer
-- is serving the task, and waiting for it would make every claim of the queue take turns.
-- params: $1 queue, $2 paused tasks text[] (empty: none)
-- result: rows { task }, the tasks locked
-- index:  jfast_task_limits_pkey
SELECT task FROM jfast_task_limits
WHERE queue = $1 AND task <> ALL($2::text[])
ORDER BY task
FOR UPDATE SKIP LOCKED
