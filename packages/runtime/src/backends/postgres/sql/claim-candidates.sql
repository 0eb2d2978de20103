-- The jobs claim.sql would take, without taking them: when a claim statement fails on a row it cannot process,
-- the backend claims these one at a time (claim.sql narrowed to one id) and quarantines the row that fails, so
-- that one bad row never stops the queue. Only ever run after such a failure.
-- params: $1 queue, $2 limit, $3 paused tasks text[]
-- result: rows { id }, in the claim's order
-- index:  jfast_jobs_claim_idx, one range read per priority as in claim.sql
SELECT c.id
FROM unnest('{0,1,2,3,4,5,6,7,8,9}'::smallint[]) AS p(priority)
CROSS JOIN LATERAL (
  SELECT id
  FROM jfast_jobs
  WHERE queue = $1 AND phase = 'open' AND priority = p.priority AND available_at <= now()
      -- Redundant with the conditions beside it, and only an index condition of jfast_jobs_claim_idx: it keeps the
      -- plan on that index when the table has no statistics yet (a fresh table before its first ANALYZE, or a server
      -- without autovacuum), where jfast_jobs_open_idx filtering priority row by row once made every claim read the backlog.
      AND (queue, priority, available_at) >= ($1, p.priority, '-infinity'::timestamptz)
    AND (state = 'ready' OR locked_until < now() OR locked_until IS NULL) AND task <> ALL($3::text[])
  ORDER BY available_at, seq
  LIMIT $2
) AS c
LIMIT $2
