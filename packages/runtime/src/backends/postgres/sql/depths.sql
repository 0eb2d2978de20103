-- Queue depths for /ready and /queue/stats, probed often. Nothing here visits a finished row: ready,
-- scheduled and running are counted inside the open index (which holds only live jobs; a running job was due
-- when it was claimed, so it sits among the due ones), and the
-- dead count is read from jfast_queue_counters, kept by triggers, instead of counting dead rows.
-- params: $1 queue
-- result: one row { ready, scheduled, running, dead } (bigint)
-- index:  jfast_jobs_open_idx, jfast_queue_counters_pkey
-- Ready and running jobs are both among the due entries: one pass over them counts both.
SELECT
  due.ready,
  (SELECT count(*) FROM jfast_jobs WHERE queue = $1 AND phase = 'open' AND available_at > now() AND state = 'ready') AS scheduled,
  due.running,
  coalesce((SELECT dead FROM jfast_queue_counters WHERE queue = $1), 0) AS dead
FROM (
  SELECT count(*) FILTER (WHERE state = 'ready') AS ready, count(*) FILTER (WHERE state = 'running') AS running
  FROM jfast_jobs WHERE queue = $1 AND phase = 'open' AND available_at <= now()
) AS due
