-- At start, when the queue has fair tasks (fairness alone, claim-fair.sql): the keys of their open jobs that are not
-- among the task's keys in turn order join them (jobs stored while the task had no fairness, or by a process that
-- did not know it), level with the least served key. Never on an enqueue or claim path.
-- params: $1 queue, $2 tasks text[]
-- result: none
-- index:  jfast_jobs_limit_key_idx (a skip scan of each task's keys); jfast_fair_keys_pkey
WITH RECURSIVE keys AS (
  SELECT t.task, (
    SELECT j.limit_key FROM jfast_jobs AS j
    WHERE j.queue = $1 AND j.task = t.task AND j.phase = 'open' AND j.limit_key IS NOT NULL
    ORDER BY j.limit_key LIMIT 1
  ) AS limit_key
  FROM unnest($2::text[]) AS t(task)
  UNION ALL
  SELECT keys.task, (
    SELECT j.limit_key FROM jfast_jobs AS j
    WHERE j.queue = $1 AND j.task = keys.task AND j.phase = 'open' AND j.limit_key IS NOT NULL AND j.limit_key > keys.limit_key
    ORDER BY j.limit_key LIMIT 1
  )
  FROM keys WHERE keys.limit_key IS NOT NULL
)
INSERT INTO jfast_fair_keys AS fk (queue, task, limit_key, turn, served_at)
SELECT $1, k.task, k.limit_key,
       greatest(coalesce(t.served, least_served.turn, 0), coalesce(least_served.turn, 0)),
       coalesce(t.served_at, '-infinity')
FROM keys AS k
LEFT JOIN jfast_key_turns AS t ON t.queue = $1 AND t.task = k.task AND t.limit_key = k.limit_key
LEFT JOIN LATERAL (
  SELECT x.turn FROM jfast_fair_keys AS x WHERE x.queue = $1 AND x.task = k.task ORDER BY x.turn LIMIT 1
) AS least_served ON true
WHERE k.limit_key IS NOT NULL
ORDER BY k.task, k.limit_key
ON CONFLICT (queue, task, limit_key) DO NOTHING
