-- Debounce (docs/flow-control.md#debounce): folds a new job into its key's waiting job, if there is one: the waiting
-- job takes the new payload and starts $4 ms from now, but never later than $5 ms after its own enqueue. Waiting: ready
-- and never started (no attempt spent); a job that has started leaves its key to the next one. Runs after the key's
-- advisory lock (debounce.ts), in the transaction that inserts the job when nothing was folded.
-- params: $1 queue, $2 scoped key, $3 payload (json text), $4 delay ms, $5 max wait ms (null: none)
-- result: one row { id } of the job folded into, or none
-- index:  jfast_unique_keys_pkey (the key's job), jfast_jobs_pkey
-- A fair task's job (fair_turn set) given a later start waits for a new turn, placed when it comes due (fair-place.sql).
WITH holder AS (
  SELECT job_id FROM jfast_unique_keys WHERE queue = $1 AND key = $2
)
UPDATE jfast_jobs AS j
SET payload = $3::json,
    available_at = CASE WHEN $5::float8 IS NULL THEN now() + $4::float8 * interval '1 millisecond'
                        ELSE least(now() + $4::float8 * interval '1 millisecond', j.created_at + $5::float8 * interval '1 millisecond') END,
    fair_turn = CASE WHEN j.fair_turn IS NOT NULL THEN 'Infinity'::double precision END
FROM holder
WHERE j.id = holder.job_id AND j.queue = $1 AND j.state = 'ready' AND j.attempts = 0
RETURNING j.id
