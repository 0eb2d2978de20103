-- Records that a send is taking longer than [plugin.outbox] send_timeout, without settling the row: the
-- relay keeps its claim until the send itself succeeds or fails, so no second send of the row starts
-- meanwhile. The recorded error makes the row count as failing in /ready from that moment.
-- params: $1 ids text[], $2 relay id, $3 the error (jsonb object, as text)
-- result: none
-- index:  jfast_outbox_pkey
UPDATE jfast_outbox
SET errors = errors || jsonb_build_array($3::jsonb)
WHERE id = ANY($1::text[]) AND claimed_by = $2 AND state = 'pending'
