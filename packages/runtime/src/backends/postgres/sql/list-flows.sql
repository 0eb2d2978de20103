-- Flows newest first (listFlows), of one state, name or tenant, continued after the seq $6 of the last row read.
-- The state is derived from the counters as core/flow.ts flowState does. A page reads at most $7 flows of the
-- queue after the cursor and keeps the matching ones, so a filter that matches little costs no more than $7
-- entries of the index; `edge_seq` is the last entry read, where the next page starts.
-- params: $1 queue, $2 state (text or null), $3 name (text or null), $4 tenant id (text or null), $5 limit,
--         $6 continue after this seq (bigint or null), $7 entries read at most
-- result: the page's flows (flow columns, seq), each with edge_seq and scanned; one row of nulls but those when
--         none matched
-- index:  jfast_flows_list_idx (queue, seq DESC)
WITH scanned AS MATERIALIZED (
  SELECT f.*,
         CASE WHEN f.cancelled THEN 'cancelled' WHEN f.dead > 0 THEN 'failed'
              WHEN f.completed >= f.total THEN 'completed' ELSE 'running' END AS state
  FROM jfast_flows AS f
  WHERE f.queue = $1 AND ($6::bigint IS NULL OR f.seq < $6::bigint)
  ORDER BY f.seq DESC
  LIMIT $7
),
page AS (
  SELECT * FROM scanned
  WHERE ($2::text IS NULL OR state = $2::text) AND ($3::text IS NULL OR name = $3::text) AND ($4::text IS NULL OR tenant_id = $4::text)
  ORDER BY seq DESC
  LIMIT $5
),
edge AS (
  SELECT (SELECT min(seq) FROM scanned) AS edge_seq, (SELECT count(*) FROM scanned) AS scanned
)
SELECT page.id, page.name, page.kind, page.tenant_id, page.created_at, page.finished_at, page.total, page.completed,
       page.dead, page.cancelled, page.state, page.seq, edge.edge_seq, edge.scanned
FROM edge LEFT JOIN page ON true
ORDER BY page.seq DESC
