-- Deletes the oldest idempotency keys past the retention period, one bounded batch at a time so a large
-- backlog never becomes one long transaction.
-- params: $1 retention in seconds (double precision), $2 batch size (integer)
-- result: one row { deleted: count of keys removed by this batch }
-- index:  jfast_inbox_created_at_idx (range on created_at, oldest first)
WITH deleted AS (
  DELETE FROM jfast_inbox
  WHERE (consumer, key) IN (
    SELECT consumer, key
    FROM jfast_inbox
    WHERE created_at < now() - $1::double precision * interval '1 second'
    ORDER BY created_at
    LIMIT $2
  )
  RETURNING 1
)
SELECT count(*)::integer AS deleted FROM deleted
