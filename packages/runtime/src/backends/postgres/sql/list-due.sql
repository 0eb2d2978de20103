-- Ready ($2 = 'ready') or running ($2 = 'running') jobs, in the order claims take them: by the time they were due,
-- then enqueue order. Both are the open index's due entries; a job's state is not in the index (a claim must not
-- change an indexed column, migration 0013), so it is read from the row, as depths.sql does.
-- index:  jfast_jobs_open_idx (queue, available_at, seq) WHERE phase = 'open'
-- A page reads at most $7 entries of the index after the cursor and keeps the ones that match: its cost is
-- bounded by $7 whatever the filters, and a page may hold fewer than $8 rows while more follow. Written oldest
-- first; load-sql.ts derives the newest-first statement (each ASC a DESC, the cursor's > a <) and the first page's.
-- params: $1 queue, $2 state, $3 task (text or null), $4 tenant id (text or null), $5 continue after this
--         available_at (text of a timestamptz), $6 ... and this seq, $7 entries read at most, $8 limit
-- last_run: the last attempt's record, progress: the running job's (core/job-life.ts), for the row's timing
-- result: the page's rows (job columns + state, locked_by, locked_until, died_at, cursor_at, cursor_seq) in order,
--         each with edge_at, edge_seq (the last entry read) and scanned (entries read); one row of nulls but those
--         three when no entry matched
WITH scanned AS MATERIALIZED (
  SELECT id, seq, available_at AS k,
         state = $2 AND ($3::text IS NULL OR task = $3::text) AND ($4::text IS NULL OR tenant_id = $4::text) AS hit
  FROM jfast_jobs
  WHERE queue = $1 AND phase = 'open' AND available_at <= now()
    AND (available_at, seq) > ($5::timestamptz, $6::bigint)
  ORDER BY available_at ASC, seq ASC
  LIMIT $7
),
page AS (
  SELECT id, k, seq FROM scanned WHERE hit ORDER BY k ASC, seq ASC LIMIT $8
),
edge AS (
  SELECT (SELECT k::text FROM scanned ORDER BY k DESC, seq DESC LIMIT 1) AS edge_at,
         (SELECT seq FROM scanned ORDER BY k DESC, seq DESC LIMIT 1) AS edge_seq,
         (SELECT count(*) FROM scanned) AS scanned
)
SELECT j.id, j.seq, j.task, j.payload, j.attempts, j.max_attempts, j.available_at, j.created_at,
       j.tenant_id, j.request_id, j.trace, j.errors, j.timeout_ms, j.flow, j.state, j.locked_by, j.locked_until, j.died_at,
       j.runs -> -1 AS last_run, j.progress,
       page.k::text AS cursor_at, page.seq AS cursor_seq, edge.edge_at, edge.edge_seq, edge.scanned
FROM edge
LEFT JOIN (page JOIN jfast_jobs AS j ON j.id = page.id) ON true
ORDER BY page.k ASC, page.seq ASC
