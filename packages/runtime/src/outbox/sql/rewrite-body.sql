-- Rewrites one row's body if it still waits for the relay (or is dead) and is unchanged since it was read.
-- params: $1 row id, $2 body read (text), $3 new body (json text)
-- result: one row { id } when rewritten, else none (relayed or changed meanwhile)
-- index:  jfast_outbox_pkey
UPDATE jfast_outbox
SET body = $3::json
WHERE id = $1 AND state IN ('pending', 'dead') AND body::text = $2
RETURNING id
