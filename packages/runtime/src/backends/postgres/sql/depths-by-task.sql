-- Depths per task for the admin's queues view and the jfast_queue_depth gauge, optionally of one tenant's jobs.
-- The totals per state are exact and counted inside the open index, as depths.sql counts them. The task (and
-- tenant) of a live job is not in the index, so splitting a total by task reads rows: at most $3 due ones (ready
-- and running) and $3 scheduled ones, the first in the index's order, and each task's share of them is scaled to
-- its state's total. Exact while a
-- state holds at most $3 jobs; an estimate beyond, which `estimated` says. Grouping every live row by task
-- instead is a sequential scan of jfast_jobs (finished rows included) once the backlog is large, on every
-- refresh of the page and every scrape. Dead letters come from jfast_task_counters (kept by the trigger of 0009)
-- without a tenant; with one, from the newest $3 dead rows only (the dead index read backwards, then filtered).
-- params: $1 queue, $2 tenant id (text or null), $3 rows read at most per state (integer)
-- result: rows { task, ready, scheduled, running, dead } (bigint) and one row with task null carrying
--         estimated (boolean): a state had more jobs than were read, so its counts per task are scaled
-- index:  jfast_jobs_open_idx, jfast_task_counters_pkey, jfast_jobs_dead_idx (tenant)
WITH totals AS (
  SELECT 'ready' AS state, count(*) AS total FROM jfast_jobs WHERE queue = $1 AND phase = 'open' AND available_at <= now() AND state = 'ready'
  UNION ALL
  SELECT 'scheduled', count(*) FROM jfast_jobs WHERE queue = $1 AND phase = 'open' AND available_at > now() AND state = 'ready'
  UNION ALL
  SELECT 'running', count(*) FROM jfast_jobs WHERE queue = $1 AND phase = 'open' AND available_at <= now() AND state = 'running'
),
sample AS (
  -- Ready and running jobs are read together: the first $3 due rows of the open index, each counted in its
  -- state. Running jobs are among the first due ones (claims take the oldest first), so a backlog behind them is
  -- not read through to find them.
  (SELECT state, task, tenant_id FROM jfast_jobs
   WHERE queue = $1 AND phase = 'open' AND available_at <= now()
   ORDER BY available_at, seq LIMIT $3)
  UNION ALL
  (SELECT 'scheduled', task, tenant_id FROM jfast_jobs
   WHERE queue = $1 AND phase = 'open' AND available_at > now() AND state = 'ready'
   ORDER BY available_at, seq LIMIT $3)
),
sampled AS (
  SELECT state, count(*) AS n FROM sample GROUP BY state
),
live AS (
  SELECT s.task, s.state, round(count(*) * (t.total::numeric / r.n))::bigint AS n
  FROM sample AS s
  JOIN sampled AS r USING (state)
  JOIN totals AS t USING (state)
  WHERE $2::text IS NULL OR s.tenant_id = $2::text
  GROUP BY s.task, s.state, r.n, t.total
),
newest_dead AS (
  SELECT task, tenant_id
  FROM jfast_jobs
  WHERE queue = $1 AND phase = 'dead' AND $2::text IS NOT NULL
  ORDER BY died_at DESC, seq DESC
  LIMIT $3
),
dead AS (
  SELECT task, dead AS n FROM jfast_task_counters WHERE queue = $1 AND dead > 0 AND $2::text IS NULL
  UNION ALL
  SELECT task, count(*) FROM newest_dead WHERE tenant_id = $2::text GROUP BY task
),
counts AS (
  SELECT task, state, n FROM live
  UNION ALL
  SELECT task, 'dead', n FROM dead
)
SELECT task,
       coalesce(sum(n) FILTER (WHERE state = 'ready'), 0)::bigint AS ready,
       coalesce(sum(n) FILTER (WHERE state = 'scheduled'), 0)::bigint AS scheduled,
       coalesce(sum(n) FILTER (WHERE state = 'running'), 0)::bigint AS running,
       coalesce(sum(n) FILTER (WHERE state = 'dead'), 0)::bigint AS dead,
       NULL::boolean AS estimated
FROM counts
GROUP BY task
UNION ALL
SELECT NULL, 0, 0, 0, 0,
       (SELECT count(*) FROM newest_dead) >= $3
       OR EXISTS (SELECT 1 FROM sampled JOIN totals USING (state) WHERE sampled.n < totals.total)
