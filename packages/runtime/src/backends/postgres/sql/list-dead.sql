-- Dead letters, newest death first (seq breaks ties between deaths in the same statement).
-- params: $1 queue, $2 limit, $3 offset
-- result: job columns + died_at
-- index:  jfast_jobs_dead_idx (queue, died_at DESC, seq DESC) WHERE phase = 'dead'
SELECT id, seq, task, priority, payload, attempts, max_attempts, available_at, created_at,
       tenant_id, request_id, trace, errors, timeout_ms, flow, died_at
FROM jfast_jobs
WHERE queue = $1 AND phase = 'dead'
ORDER BY died_at DESC, seq DESC
LIMIT $2 OFFSET $3
