-- Completed ($2 = 'completed', kept with [plugin.queue] keep_completed) or cancelled ($2 = 'cancelled') jobs, in
-- id order: by creation for the ids jfast generates (UUIDv7, time first), by the caller's own id for the others.
-- No index holds finished rows by time: one would cost every completion an index entry, the hottest write of the
-- queue. So a page walks the primary key instead, at most $7 entries after the cursor whatever their queue or
-- state, and keeps the matching ones: bounded by $7, and a page holds fewer than $8 rows where such rows are a
-- small part of the table (cancelled ones always are). Written oldest first; load-sql.ts derives the newest-first
-- statement (ASC <-> DESC, the cursor's > into <) and the first page's (no cursor).
-- params: $1 queue, $2 state, $3 task (text or null), $4 tenant id (text or null), $5 continue after this id,
--         $6 unused (null), $7 entries read at most, $8 limit
-- result: as list-due.sql (cursor_at is the id, cursor_seq and edge_seq are unused)
-- index:  jfast_jobs_pkey (id)
WITH scanned AS MATERIALIZED (
  SELECT id, seq, id AS k,
         queue = $1 AND state = $2 AND ($3::text IS NULL OR task = $3::text) AND ($4::text IS NULL OR tenant_id = $4::text) AS hit
  FROM jfast_jobs
  WHERE true
    AND id > $5::text AND $6::bigint IS NULL
  ORDER BY id ASC
  LIMIT $7
),
page AS (
  SELECT id, k, seq FROM scanned WHERE hit ORDER BY k ASC LIMIT $8
),
edge AS (
  SELECT (SELECT k FROM scanned ORDER BY k DESC LIMIT 1) AS edge_at,
         NULL::bigint AS edge_seq,
         (SELECT count(*) FROM scanned) AS scanned
)
SELECT j.id, j.seq, j.task, j.payload, j.attempts, j.max_attempts, j.available_at, j.created_at,
       j.tenant_id, j.request_id, j.trace, j.errors, j.timeout_ms, j.flow, j.state, j.locked_by, j.locked_until, j.died_at,
       page.k AS cursor_at, page.seq AS cursor_seq, edge.edge_at, edge.edge_seq, edge.scanned
FROM edge
LEFT JOIN (page JOIN jfast_jobs AS j ON j.id = page.id) ON true
ORDER BY page.k ASC
