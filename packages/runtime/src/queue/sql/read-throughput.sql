-- Counts per minute from $2 on, summed over tasks, or of one task.
-- params: $1 queue, $2 from (timestamptz, inclusive), $3 task (text or null: every task)
-- result: rows { minute, processed, failed, dead }, only minutes that have a row
-- index:  jfast_stats_pkey (queue, span, at, task): a range over at most 1 440 minutes
SELECT at AS minute, sum(processed) AS processed, sum(failed) AS failed, sum(dead) AS dead
FROM jfast_stats
WHERE queue = $1 AND span = 1 AND at >= $2::timestamptz AND ($3::text IS NULL OR task = $3::text)
GROUP BY at
ORDER BY at
