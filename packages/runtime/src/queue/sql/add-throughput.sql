-- Adds one flush of per-minute counts; a minute and task already there is added to.
-- params: $1 queue, $2 minutes timestamptz[], $3 tasks text[], $4 processed bigint[], $5 failed bigint[],
--         $6 dead bigint[] (pairwise)
-- result: none
-- index:  jfast_throughput_pkey (ON CONFLICT)
INSERT INTO jfast_throughput AS t (queue, minute, task, processed, failed, dead)
SELECT $1, c.minute, c.task, c.processed, c.failed, c.dead
FROM unnest($2::timestamptz[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[]) AS c(minute, task, processed, failed, dead)
ON CONFLICT (queue, minute, task) DO UPDATE
SET processed = t.processed + excluded.processed,
    failed = t.failed + excluded.failed,
    dead = t.dead + excluded.dead
