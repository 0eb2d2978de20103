-- The event rows of one type written in a time range within a request, oldest first (docs/alerts.md#promises): the
-- events a promise rule checks. A row pruned after delivery (`[plugin.outbox] retention`) is no longer found.
-- params: $1 event type, $2 from (inclusive), $3 to (exclusive), $4 limit
-- result: rows { id, destination, state, attempts, created_at, delivered_at, died_at, event_id, request_id, last_error }
-- index:  jfast_outbox_event_type_idx (0038), on the same expressions
SELECT id, destination, state, attempts, created_at, delivered_at, died_at,
       body ->> 'id' AS event_id,
       body ->> 'requestId' AS request_id,
       errors -> -1 AS last_error
FROM jfast_outbox
WHERE kind = 'event' AND (body ->> 'type') = $1 AND (body ->> 'requestId') IS NOT NULL
  AND created_at >= $2 AND created_at < $3
ORDER BY created_at, seq
LIMIT $4
