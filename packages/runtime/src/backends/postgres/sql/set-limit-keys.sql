-- Stores the per-key concurrency keys of jobs just inserted (docs/flow-control.md#per-key-concurrency), in the
-- transaction of their insert, so no claim ever sees one of them without its key. Only a batch with a keyed job
-- runs it: plain enqueues never do. A key of a fair task (fairness alone: claim-fair.sql) joins the task's keys in
-- turn order, level with the least served one unless it took more turns before it left; a key there already is
-- left as it is (locked, so a claim dropping it as empty skips it, or this waits and adds it again).
-- params: $1 queue, $2 ids text[], $3 keys text[]
-- result: none
-- index:  jfast_jobs_pkey; jfast_task_limits_pkey; jfast_fair_keys_turn_idx (least served); jfast_fair_keys_pkey
WITH keyed AS (
  UPDATE jfast_jobs AS j
  SET limit_key = k.limit_key
  FROM unnest($2::text[], $3::text[]) AS k(id, limit_key)
  WHERE j.id = k.id AND j.queue = $1 AND j.limit_key IS NULL
  RETURNING j.task, j.limit_key
),
fair AS (
  SELECT DISTINCT k.task, k.limit_key
  FROM keyed AS k
  JOIN jfast_task_limits AS l ON l.queue = $1 AND l.task = k.task
  WHERE l.fair AND NOT l.per_key AND l.on_dead IS NULL AND l.key_rate_max IS NULL
)
INSERT INTO jfast_fair_keys AS fk (queue, task, limit_key, turn, served_at)
SELECT $1, f.task, f.limit_key,
       greatest(coalesce(t.served, least_served.turn, 0), coalesce(least_served.turn, 0)),
       coalesce(t.served_at, '-infinity')
FROM fair AS f
LEFT JOIN jfast_key_turns AS t ON t.queue = $1 AND t.task = f.task AND t.limit_key = f.limit_key
LEFT JOIN LATERAL (
  SELECT x.turn FROM jfast_fair_keys AS x WHERE x.queue = $1 AND x.task = f.task ORDER BY x.turn LIMIT 1
) AS least_served ON true
ORDER BY f.task, f.limit_key
ON CONFLICT (queue, task, limit_key) DO UPDATE SET turn = fk.turn
