-- At start, when the queue has fair tasks (fairness alone, claim-fair.sql): their open jobs stored without a turn
-- (while the task had no fairness, or by a process that did not know it) wait for one ('Infinity'), and the next
-- claim places them in the order they came due (fair-place.sql). Never on an enqueue or claim path.
-- params: $1 queue, $2 tasks text[]
-- result: none
-- index:  jfast_jobs_claim_idx, filtered on the task
UPDATE jfast_jobs
SET fair_turn = 'Infinity'::double precision
WHERE queue = $1 AND phase = 'open' AND task = ANY($2::text[]) AND limit_key IS NOT NULL AND fair_turn IS NULL
