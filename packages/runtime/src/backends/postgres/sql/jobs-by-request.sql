-- A request's jobs on one queue, oldest first (docs/admin-api.md#timeline).
-- params: $1 queue, $2 request id, $3 limit
-- result: job columns + state, locked_by, locked_until, died_at, finished_at, unique_spec, and each attempt's
--         record (runs, core/job-life.ts) without its log lines: a timeline shows when each ran, not what it logged
-- index:  jfast_jobs_request_idx (0033): only rows with a request id are in it
SELECT id, seq, task, priority, payload, attempts, max_attempts, available_at, created_at,
       tenant_id, request_id, trace, errors, timeout_ms, flow,
       state, locked_by, locked_until, died_at, finished_at, unique_spec, progress,
       (SELECT jsonb_agg(run - 'logs' ORDER BY ordinality) FROM jsonb_array_elements(runs) WITH ORDINALITY AS r (run, ordinality)) AS runs
FROM jfast_jobs
WHERE request_id = $2 AND queue = $1
ORDER BY created_at, seq
LIMIT $3
