-- Which of these jobs are committed, waking the queue's workers if any is: the first id of each batch written in a
-- caller's transaction, looked up until that transaction's commit makes the row visible (commit-watch.ts). One
-- NOTIFY per statement, and only when a row is found (the uncorrelated subquery runs once, and only then). A row
-- deleted since (completed with keep_completed = false) is not found either; it is looked up again until the watch
-- gives up, harmlessly.
-- params: $1 ids text[], $2 notification channel
-- result: one row { id } per id found
-- index:  jfast_jobs_pkey
SELECT id, (SELECT pg_notify($2, '')) AS notified FROM jfast_jobs WHERE id = ANY($1::text[])
