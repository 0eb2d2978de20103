-- Records a failed send and schedules the next attempt (exponential backoff computed by the relay).
-- params: $1 id, $2 relay id, $3 the attempt's error (jsonb object, as text), $4 next attempt time (timestamptz)
-- result: none
-- index:  jfast_outbox_pkey
UPDATE jfast_outbox
SET errors = errors || jsonb_build_array($3::jsonb), available_at = $4::timestamptz, claimed_by = NULL
WHERE id = $1 AND claimed_by = $2 AND state = 'pending'
