-- Which of these jobs are committed: the first id of each batch written in a caller's transaction, looked up
-- until that transaction's commit makes the row visible (commit-watch.ts). A row deleted since (completed with
-- keep_completed = false) is not found either; it is looked up again until the watch gives up, harmlessly.
-- params: $1 ids text[]
-- result: one row { id } per id found
-- index:  jfast_jobs_pkey
SELECT id FROM jfast_jobs WHERE id = ANY($1::text[])
