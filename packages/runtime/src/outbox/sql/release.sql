-- Gives claimed rows back at once, with their attempt returned: the relay is stopping and abandoned the
-- send before it settled. The send may still have reached its destination; a repeat of the same id is
-- then a no-op where the destination can tell (see docs/outbox.md#guarantees).
-- params: $1 ids text[], $2 relay id
-- result: none
-- index:  jfast_outbox_pkey
UPDATE jfast_outbox
SET attempts = greatest(attempts - 1, 0), available_at = now(), claimed_by = NULL
WHERE id = ANY($1::text[]) AND claimed_by = $2 AND state = 'pending'
