-- Each task's rows of one span from $3 on, with their histograms.
-- params: $1 queue, $2 span (1 minute, 60 hour), $3 from (timestamptz, inclusive), $4 task (text or null: every task)
-- result: rows { at, task, processed, failed, dead, run_ms, wait_ms } oldest first
-- index:  jfast_stats_pkey (queue, span, at, task): at most 1 440 minutes or 168 hours per task
SELECT at, task, processed, failed, dead, run_ms, wait_ms
FROM jfast_stats
WHERE queue = $1 AND span = $2::smallint AND at >= $3::timestamptz AND ($4::text IS NULL OR task = $4::text)
ORDER BY at, task
