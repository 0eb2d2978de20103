-- Deletes the given dead letters for good.
-- params: $1 queue, $2 job ids text[]
-- result: one row { id } per job deleted; ids missing from the result were not dead letters
-- index:  jfast_jobs_pkey
DELETE FROM jfast_jobs
WHERE queue = $1 AND phase = 'dead' AND id = ANY($2::text[])
RETURNING id
