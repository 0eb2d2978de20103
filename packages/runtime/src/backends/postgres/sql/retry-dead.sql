-- Requeues the given dead letters with attempts reset (their error history stays); wakes workers.
-- params: $1 queue, $2 job ids text[], $3 notification channel
-- result: one row { id } per job requeued; ids missing from the result were not dead letters
-- index:  jfast_jobs_pkey
WITH retried AS (
  UPDATE jfast_jobs
  SET state = 'ready', attempts = 0, available_at = now(), died_at = NULL,
      -- A unique job that did not hold its key while dead does not take it back (another job may hold it now).
      unique_phases = CASE WHEN 'dead' = ANY (unique_phases) THEN unique_phases END
  WHERE queue = $1 AND phase = 'dead' AND id = ANY($2::text[])
  RETURNING id, task, limit_key
),
-- A fair task's key (claim-fair.sql) joins its keys in turn order again, level with the least served one.
fair_keys AS (
  INSERT INTO jfast_fair_keys AS fk (queue, task, limit_key, turn, served_at)
  SELECT $1, f.task, f.limit_key,
         greatest(coalesce(t.served, least_served.turn, 0), coalesce(least_served.turn, 0)),
         coalesce(t.served_at, '-infinity')
  FROM (
    SELECT DISTINCT r.task, r.limit_key FROM retried AS r
    JOIN jfast_task_limits AS l ON l.queue = $1 AND l.task = r.task
    WHERE r.limit_key IS NOT NULL AND l.fair AND NOT l.per_key AND l.on_dead IS NULL AND l.key_rate_max IS NULL
  ) AS f
  LEFT JOIN jfast_key_turns AS t ON t.queue = $1 AND t.task = f.task AND t.limit_key = f.limit_key
  LEFT JOIN LATERAL (
    SELECT x.turn FROM jfast_fair_keys AS x WHERE x.queue = $1 AND x.task = f.task ORDER BY x.turn LIMIT 1
  ) AS least_served ON true
  ORDER BY f.task, f.limit_key
  ON CONFLICT (queue, task, limit_key) DO UPDATE SET turn = fk.turn
)
SELECT id, (SELECT pg_notify($3, '')) AS notified FROM retried
