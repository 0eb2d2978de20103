-- One job with its bookkeeping, in any state.
-- params: $1 queue, $2 job id
-- result: zero or one row: job columns + state, locked_by, locked_until, died_at, unique_spec, and a completed
--         job's result (has_result: a stored JSON null reads as null too), result_omitted, runs and progress
--         (core/job-life.ts)
-- index:  jfast_jobs_pkey
SELECT id, seq, task, priority, payload, attempts, max_attempts, available_at, created_at,
       tenant_id, request_id, trace, errors, timeout_ms, flow,
       state, locked_by, locked_until, died_at, unique_spec, expires_at,
       result, result IS NOT NULL AS has_result, result_omitted, runs, progress
FROM jfast_jobs
WHERE id = $2 AND queue = $1
