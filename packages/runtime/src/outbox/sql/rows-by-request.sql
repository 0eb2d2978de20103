-- A request's rows, oldest first (docs/admin-api.md#timeline): pending, delivered (within the retention) or dead.
-- params: $1 request id, $2 limit
-- result: rows { id, kind, destination, state, attempts, created_at, delivered_at, died_at, event_type, event_id }
-- index:  jfast_outbox_request_idx (0033), on the same expression
SELECT id, kind, destination, state, attempts, created_at, delivered_at, died_at,
       CASE WHEN kind = 'event' THEN body ->> 'type' END AS event_type,
       body ->> 'id' AS body_id
FROM jfast_outbox
WHERE (body ->> 'requestId') = $1
ORDER BY created_at, seq
LIMIT $2
