-- Marks rows delivered. Only the relay that holds the claim settles it: a relay whose lease ran out and
-- was taken over by another must not overwrite the new owner's outcome.
-- Delivered rows stay for [plugin.outbox] retention so a repeated id is recognised (prune-delivered.sql).
-- params: $1 ids text[], $2 relay id
-- result: none
-- index:  jfast_outbox_pkey
UPDATE jfast_outbox
SET state = 'delivered', delivered_at = now(), claimed_by = NULL
WHERE id = ANY($1::text[]) AND claimed_by = $2 AND state = 'pending'
