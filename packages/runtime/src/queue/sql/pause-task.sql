-- Pauses a task; pausing it again keeps the first row (who and when).
-- params: $1 queue, $2 task, $3 paused by (text or null)
-- result: one row { task, paused_at, paused_by }: the new row, or the one already there
-- index:  jfast_paused_tasks_pkey (ON CONFLICT and the lookup)
WITH inserted AS (
  INSERT INTO jfast_paused_tasks (queue, task, paused_by)
  VALUES ($1, $2, $3)
  ON CONFLICT (queue, task) DO NOTHING
  RETURNING task, paused_at, paused_by
)
SELECT task, paused_at, paused_by FROM inserted
UNION ALL
SELECT task, paused_at, paused_by FROM jfast_paused_tasks
WHERE queue = $1 AND task = $2 AND NOT EXISTS (SELECT 1 FROM inserted)
