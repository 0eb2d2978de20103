-- Dead letters whose payload contains $2 (a JSON object built from a dot path and a value), newest death first,
-- optionally of one task and one tenant, a keyset page at a time.
-- params: $1 queue, $2 containment (jsonb), $3 task (text or null), $4 tenant id (text or null),
--         $5 continue after this died_at (text form of a timestamptz, or null), $6 ... and this seq, $7 limit
-- result: job columns + died_at + cursor_at (died_at as text, exact for the next page's $5)
-- index:  jfast_jobs_dead_payload_idx (GIN, jsonb_path_ops, on jfast_payload_jsonb(payload) WHERE phase = 'dead'): only the
--         rows that contain $2 are read, then sorted (cost grows with the matches, never with the dead letters)
WITH matches AS MATERIALIZED (
  -- Materialized, with no ORDER BY or LIMIT inside: otherwise the planner may walk jfast_jobs_dead_idx in
  -- died_at order filtering every dead letter by payload until it has a page, which for a rare value is all of
  -- them. This way only the rows the GIN index says contain $2 are read; the sort is over those.
  SELECT id, seq, task, priority, payload, attempts, max_attempts, available_at, created_at,
         tenant_id, request_id, trace, errors, timeout_ms, flow, died_at
  FROM jfast_jobs
  WHERE phase = 'dead'
    AND jfast_payload_jsonb(payload) @> $2::jsonb
    AND queue = $1
    AND ($3::text IS NULL OR task = $3::text)
    AND ($4::text IS NULL OR tenant_id = $4::text)
    AND ($5::timestamptz IS NULL OR (died_at, seq) < ($5::timestamptz, $6::bigint))
)
SELECT matches.*, died_at::text AS cursor_at
FROM matches
ORDER BY died_at DESC, seq DESC
LIMIT $7
