-- Queue depths for /ready and /queue/stats, probed often. Nothing here visits a finished row, and no count
-- reads the rows of a large backlog: ready, scheduled and running are counted inside the open index, and the
-- dead count is read from jfast_queue_counters, kept by triggers, instead of counting dead rows.
--   * scheduled: open entries not yet due. Only a ready job waits for a time to come; a running job was due
--     when it was claimed. An index-only count.
--   * running: a job's state is not in the open index (a claim must not change an indexed column, migration
--     0013), so telling running from ready reads rows. Claims take the oldest due jobs first, so the running
--     ones are at the head of the due entries, behind nothing but due jobs of paused tasks (which claims pass
--     over): the rows read are the first $2 due ones that are running or of a task not paused. `more` says the
--     last of them was running too, so more may follow: the backend reads again with a larger $2. A running job
--     behind $2 ready ones is rare and passing: a claim of older jobs that failed and rolled back while another
--     claimer took newer ones, or a job handed over in process to an idle worker while another instance's
--     backlog waits ahead of it; it counts as ready meanwhile. A backlog of a million is not read through:
--     that was a sequential scan of jfast_jobs (0.6 s).
--   * ready: the due entries (an index-only count) less the running ones.
--   * ready and scheduled are counted exactly up to $3 - 1 entries each ($3 entries read at most): a count
--     of every entry of a million-job backlog took 1.4 s, on every probe of /ready and every refresh of the
--     Overview. A state that reaches $3 is reported (due_capped, scheduled_capped), and the backend estimates
--     it from a sample of the table's pages (depths-estimate.sql).
-- The paused tasks are a NOT EXISTS on jfast_paused_tasks, not `task <> ALL (array)`: the planner estimates the
-- latter as excluding most rows, and with few rows expected it reads and sorts every due row instead of
-- walking the index in order.
-- params: $1 queue, $2 due rows read at most to find the running ones (integer), $3 entries counted at most
--         per state (integer)
-- result: one row { ready, scheduled, running, dead } (bigint), more (boolean), due_capped and
--         scheduled_capped (boolean): the due or scheduled count stopped at $3
-- index:  jfast_jobs_open_idx, jfast_queue_counters_pkey, jfast_paused_tasks_pkey
WITH head AS (
  SELECT state, row_number() OVER (ORDER BY available_at, seq) AS pos
  FROM (
    SELECT state, available_at, seq
    FROM jfast_jobs AS j
    WHERE queue = $1 AND phase = 'open' AND available_at <= now()
      AND (state = 'running' OR NOT EXISTS (SELECT 1 FROM jfast_paused_tasks AS p WHERE p.queue = $1 AND p.task = j.task))
    ORDER BY available_at, seq
    LIMIT $2
  ) AS first
),
running AS (
  SELECT count(*) FILTER (WHERE state = 'running') AS n,
         coalesce(bool_or(state = 'running') FILTER (WHERE pos = $2), false) AS more
  FROM head
),
due AS (
  SELECT count(*) AS n FROM (SELECT FROM jfast_jobs WHERE queue = $1 AND phase = 'open' AND available_at <= now() LIMIT $3) AS d
),
scheduled AS (
  SELECT count(*) AS n FROM (SELECT FROM jfast_jobs WHERE queue = $1 AND phase = 'open' AND available_at > now() LIMIT $3) AS s
)
SELECT
  due.n - running.n AS ready,
  scheduled.n AS scheduled,
  running.n AS running,
  coalesce((SELECT dead FROM jfast_queue_counters WHERE queue = $1), 0) AS dead,
  running.more,
  due.n >= $3 AS due_capped,
  scheduled.n >= $3 AS scheduled_capped
FROM due, scheduled, running
