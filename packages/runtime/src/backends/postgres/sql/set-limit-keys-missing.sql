-- At start, when the queue has tasks with per-key concurrency (docs/flow-control.md#per-key-concurrency): their
-- open jobs stored without a key (enqueued before the task had the option) get the empty key, which they share, so
-- the claim of those tasks (claim-keyed.sql, which walks keys) still finds them. Never on an enqueue or claim path.
-- params: $1 queue, $2 tasks text[]
-- result: none
-- index:  jfast_jobs_claim_idx, filtered on the task
UPDATE jfast_jobs
SET limit_key = ''
WHERE queue = $1 AND phase = 'open' AND task = ANY($2::text[]) AND limit_key IS NULL
