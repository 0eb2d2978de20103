-- Jobs reached a state: their state-held keys are freed unless they hold them in that state too; with a NULL
-- state every key they hold is freed (a publish that failed).
-- params: $1 queue, $2 job ids text[], $3 the state reached, or NULL
-- result: none
-- index:  jfast_unique_keys_job_idx
DELETE FROM jfast_unique_keys
WHERE queue = $1 AND job_id = ANY ($2::text[])
  AND ($3::text IS NULL OR (states IS NOT NULL AND NOT ($3::text = ANY (states))))
