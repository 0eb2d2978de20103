-- Queue depths for /ready and /queue/stats, probed often. Nothing here visits a finished row: ready,
-- scheduled and running are counted inside their partial indexes (which hold only live jobs), and the
-- dead count is read from jfast_queue_counters, kept by triggers, instead of counting dead rows.
-- params: $1 queue
-- result: one row { ready, scheduled, running, dead } (bigint)
-- index:  jfast_jobs_ready_idx, jfast_jobs_lease_idx, jfast_queue_counters_pkey
SELECT
  (SELECT count(*) FROM jfast_jobs WHERE queue = $1 AND state = 'ready' AND available_at <= now()) AS ready,
  (SELECT count(*) FROM jfast_jobs WHERE queue = $1 AND state = 'ready' AND available_at > now()) AS scheduled,
  (SELECT count(*) FROM jfast_jobs WHERE queue = $1 AND state = 'running') AS running,
  coalesce((SELECT dead FROM jfast_queue_counters WHERE queue = $1), 0) AS dead
