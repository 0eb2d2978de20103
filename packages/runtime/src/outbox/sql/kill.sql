-- Sets a row aside as dead with the error that ended it: attempts spent, or a row no retry can deliver
-- with this configuration. Dead rows stay until retried or discarded (`jfast outbox retry|discard`).
-- params: $1 id, $2 relay id, $3 the final error (jsonb object, as text)
-- result: none
-- index:  jfast_outbox_pkey
UPDATE jfast_outbox
SET state = 'dead', died_at = now(), errors = errors || jsonb_build_array($3::jsonb), claimed_by = NULL
WHERE id = $1 AND claimed_by = $2 AND state = 'pending'
