-- Marks a batch of one worker's claims completed. Completions arriving while one batch is in flight are
-- written together by the next one. The row stays (finished_at) and leaves every partial index.
-- A job whose lease was taken over by another worker is skipped: the late outcome must not overwrite
-- the new owner's.
-- params: $1 job ids text[], $2 worker id
-- result: none
-- index:  jfast_jobs_pkey (id = ANY)
UPDATE jfast_jobs
SET state = 'completed', finished_at = now(), locked_by = NULL, locked_until = NULL
WHERE id = ANY($1::text[]) AND locked_by = $2 AND state = 'running'
