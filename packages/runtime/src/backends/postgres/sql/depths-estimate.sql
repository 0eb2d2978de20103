-- An estimate of a queue's due and scheduled jobs once depths.sql stopped counting them (a backlog past its exact
-- count): the queue's open jobs in a sample of about $2 of jfast_jobs' pages, scaled by the share of the table read.
-- TABLESAMPLE SYSTEM reads whole pages chosen by a hash of the seed, so the same table gives the same pages and two
-- refreshes do not jitter. It reads $2 pages whatever the table's size (1 000 pages, 8 MB: about 20 ms), with no
-- use of the planner's statistics, which lag a backlog that grew since the last ANALYZE. Within a few percent once
-- the state holds tens of thousands of jobs.
-- params: $1 queue, $2 pages to read (integer)
-- result: one row { due, scheduled } (bigint)
-- index:  none (a sample scan of jfast_jobs)
WITH share AS (
  SELECT least(100, 100.0 * $2 / greatest(1, pg_relation_size('jfast_jobs') / current_setting('block_size')::bigint)) AS pct
)
SELECT round(count(*) FILTER (WHERE j.available_at <= now()) * 100 / (SELECT pct FROM share))::bigint AS due,
       round(count(*) FILTER (WHERE j.available_at > now()) * 100 / (SELECT pct FROM share))::bigint AS scheduled
FROM jfast_jobs AS j TABLESAMPLE SYSTEM ((SELECT pct FROM share)) REPEATABLE (7)
WHERE j.queue = $1 AND j.phase = 'open'
