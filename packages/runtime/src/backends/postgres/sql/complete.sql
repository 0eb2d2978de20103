-- Marks a batch of claims completed. Completions arriving while one batch is in flight are written
-- together by the next one. The row stays (finished_at) and leaves every partial index.
-- A pair whose lease was taken over by another worker is skipped: the late outcome must not overwrite
-- the new owner's.
-- params: $1 job ids text[], $2 worker ids text[] (pairwise)
-- result: none
-- index:  jfast_jobs_pkey
UPDATE jfast_jobs AS j
SET state = 'completed', finished_at = now(), locked_by = NULL, locked_until = NULL
FROM unnest($1::text[], $2::text[]) AS c(id, worker)
WHERE j.id = c.id AND j.locked_by = c.worker AND j.state = 'running'
