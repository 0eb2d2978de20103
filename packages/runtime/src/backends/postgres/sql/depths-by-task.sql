-- Depths per task for the admin's queues view and the jfast_queue_depth gauge, optionally of one tenant's jobs.
-- The totals per state are counted as depths.sql counts them (the same head of at most $4 due rows finds the
-- running jobs, and `more` asks for a larger one; ready and scheduled come from index-only counts), so both
-- agree. The task (and tenant) of a live job is not in the index, so splitting a total by task reads rows: every
-- running job (from that head), at most $3 due ones and $3 scheduled ones, the first in the index's order, and
-- each task's share of them is scaled to its state's total. Exact while a state holds at most $3 jobs; an
-- estimate beyond, which `estimated` says. Grouping every live row by task
-- instead is a sequential scan of jfast_jobs (finished rows included) once the backlog is large, on every
-- refresh of the page and every scrape. The totals of ready and scheduled stop at $5 entries, as depths.sql's do:
-- a state that reaches it is reported capped, and the backend scales that state's split by its estimate. Dead
-- letters come from jfast_task_counters (kept by the trigger of 0009) without a tenant; with one, from the newest $3 dead rows only (the dead index read backwards, then filtered).
-- params: $1 queue, $2 tenant id (text or null), $3 rows read at most per state (integer), $4 due rows read at
--         most to find the running ones (integer), $5 entries counted at most per state (integer)
-- result: rows { task, ready, scheduled, running, dead } (bigint) and one row with task null carrying the count
--         of the queue's running jobs in running, and
--         estimated (boolean): a state had more jobs than were read, so its counts per task are scaled; and
--         more (boolean): as in depths.sql, the head read for running jobs ended on a running one; due_capped and
--         scheduled_capped (boolean): that total stopped at $5 (the split of the state is then of $5 jobs)
-- index:  jfast_jobs_open_idx, jfast_task_counters_pkey, jfast_jobs_dead_idx (tenant), jfast_paused_tasks_pkey
WITH head AS (
  -- As in depths.sql: the running jobs are at the head of the due entries, behind due jobs of paused tasks only.
  -- Every running job is read here, so their split by task is exact.
  SELECT state, task, tenant_id, row_number() OVER (ORDER BY available_at, seq) AS pos
  FROM (
    SELECT state, task, tenant_id, available_at, seq
    FROM jfast_jobs AS j
    WHERE queue = $1 AND phase = 'open' AND available_at <= now()
      AND (state = 'running' OR NOT EXISTS (SELECT 1 FROM jfast_paused_tasks AS p WHERE p.queue = $1 AND p.task = j.task))
    ORDER BY available_at, seq
    LIMIT $4
  ) AS first
),
running AS (
  SELECT count(*) FILTER (WHERE state = 'running') AS n,
         coalesce(bool_or(state = 'running') FILTER (WHERE pos = $4), false) AS more
  FROM head
),
totals AS (
  SELECT 'ready' AS state, count(*) - (SELECT n FROM running) AS total, count(*) >= $5 AS capped
  FROM (SELECT FROM jfast_jobs WHERE queue = $1 AND phase = 'open' AND available_at <= now() LIMIT $5) AS d
  UNION ALL
  SELECT 'scheduled', count(*), count(*) >= $5
  FROM (SELECT FROM jfast_jobs WHERE queue = $1 AND phase = 'open' AND available_at > now() LIMIT $5) AS s
  UNION ALL
  SELECT 'running', n, false FROM running
),
sample AS (
  -- The ready ones among the first $3 due rows of the open index (the backlog in claim order, paused tasks' jobs
  -- included), the running ones from the head, and the first $3 scheduled rows; each counted in its state. (Not
  -- `state = 'ready'` in the scan: the planner takes the two conditions as independent, expects few rows, and
  -- then reads and sorts every due row rather than walking the index in order.)
  SELECT 'ready' AS state, task, tenant_id
  FROM (SELECT state, task, tenant_id FROM jfast_jobs
        WHERE queue = $1 AND phase = 'open' AND available_at <= now()
        ORDER BY available_at, seq LIMIT $3) AS due_first
  WHERE state = 'ready'
  UNION ALL
  SELECT 'running', task, tenant_id FROM head WHERE state = 'running'
  UNION ALL
  (SELECT 'scheduled', task, tenant_id FROM jfast_jobs
   WHERE queue = $1 AND phase = 'open' AND available_at > now()
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
       NULL::boolean AS estimated,
       NULL::boolean AS more,
       NULL::boolean AS due_capped,
       NULL::boolean AS scheduled_capped
FROM counts
GROUP BY task
UNION ALL
SELECT NULL, 0, 0, (SELECT n FROM running), 0,
       (SELECT count(*) FROM newest_dead) >= $3
       OR EXISTS (SELECT 1 FROM sampled JOIN totals USING (state) WHERE sampled.n < totals.total),
       (SELECT more FROM running),
       (SELECT capped FROM totals WHERE state = 'ready'),
       (SELECT capped FROM totals WHERE state = 'scheduled')
