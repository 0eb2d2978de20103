-- Adds one flush of counts and histograms; a row already there is added to, its histograms bucket by bucket.
-- params: $1 queue, $2 spans smallint[] (1 minute, 60 hour), $3 ats timestamptz[], $4 tasks text[],
--         $5 processed bigint[], $6 failed bigint[], $7 dead bigint[], $8 run_ms text[] (JSON), $9 wait_ms text[]
--         (pairwise; no (span, at, task) twice: one statement cannot update a row twice)
-- result: none
-- index:  jfast_stats_pkey (ON CONFLICT)
INSERT INTO jfast_stats AS t (queue, span, at, task, processed, failed, dead, run_ms, wait_ms)
SELECT $1, c.span, c.at, c.task, c.processed, c.failed, c.dead, c.run_ms::jsonb, c.wait_ms::jsonb
FROM unnest($2::smallint[], $3::timestamptz[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[], $8::text[], $9::text[])
  AS c(span, at, task, processed, failed, dead, run_ms, wait_ms)
ON CONFLICT (queue, span, at, task) DO UPDATE
SET processed = t.processed + excluded.processed,
    failed = t.failed + excluded.failed,
    dead = t.dead + excluded.dead,
    run_ms = (SELECT coalesce(jsonb_object_agg(b, n), '{}'::jsonb) FROM (
      SELECT b, sum(n::bigint) AS n FROM (SELECT * FROM jsonb_each_text(t.run_ms) UNION ALL SELECT * FROM jsonb_each_text(excluded.run_ms)) AS e(b, n) GROUP BY b
    ) AS m),
    wait_ms = (SELECT coalesce(jsonb_object_agg(b, n), '{}'::jsonb) FROM (
      SELECT b, sum(n::bigint) AS n FROM (SELECT * FROM jsonb_each_text(t.wait_ms) UNION ALL SELECT * FROM jsonb_each_text(excluded.wait_ms)) AS e(b, n) GROUP BY b
    ) AS m)
