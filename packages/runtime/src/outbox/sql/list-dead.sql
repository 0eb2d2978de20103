-- Dead rows, newest death first, with every recorded error.
-- params: $1 limit (integer), $2 offset (integer)
-- result: rows { id, kind, destination, body (text), attempts, max_attempts, created_at, died_at, errors }
-- index:  jfast_outbox_dead_idx (died_at DESC)
SELECT id, kind, destination, body::text AS body, attempts, max_attempts, created_at, died_at, errors
FROM jfast_outbox
WHERE state = 'dead'
ORDER BY died_at DESC, seq DESC
LIMIT $1 OFFSET $2
