-- Run-time and wait histograms beside the throughput counts (docs/observability.md#run-and-wait-time-history):
-- jfast_throughput (0011) becomes jfast_stats, whose rows are minutes (span 1, kept a day) or hours (span 60, kept
-- 7 days). Each process flushes every row it counted into both its minute and its hour in one upsert, so no
-- roll-up runs. run_ms and wait_ms are sparse log-bucket histograms, {"<bucket>": count} (core/latency-histogram.ts),
-- that every process fills with the same bounds: an upsert adds them bucket by bucket.
ALTER TABLE jfast_throughput RENAME TO jfast_stats;
ALTER TABLE jfast_stats RENAME COLUMN minute TO at;
ALTER TABLE jfast_stats
  ADD COLUMN span smallint NOT NULL DEFAULT 1,
  ADD COLUMN run_ms jsonb NOT NULL DEFAULT '{}',
  ADD COLUMN wait_ms jsonb NOT NULL DEFAULT '{}';
ALTER TABLE jfast_stats DROP CONSTRAINT jfast_throughput_pkey;
ALTER TABLE jfast_stats ADD CONSTRAINT jfast_stats_pkey PRIMARY KEY (queue, span, at, task);
-- The minutes already counted make their hours; those older than a day are kept only as hours.
INSERT INTO jfast_stats (queue, span, at, task, processed, failed, dead)
SELECT queue, 60, date_trunc('hour', at), task, sum(processed), sum(failed), sum(dead)
FROM jfast_stats
GROUP BY queue, date_trunc('hour', at), task;
DELETE FROM jfast_stats WHERE span = 1 AND at < now() - interval '24 hours';
