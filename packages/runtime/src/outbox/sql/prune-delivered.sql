-- Deletes delivered rows older than the retention period, one bounded batch at a time.
-- params: $1 retention in ms (double precision), $2 batch size (integer)
-- result: one row { deleted: rows removed by this batch }
-- index:  jfast_outbox_delivered_idx (range on delivered_at, oldest first)
WITH deleted AS (
  DELETE FROM jfast_outbox
  WHERE id IN (
    SELECT id FROM jfast_outbox
    WHERE state = 'delivered' AND delivered_at < now() - $1::double precision * interval '1 millisecond'
    ORDER BY delivered_at
    LIMIT $2
  )
  RETURNING 1
)
SELECT count(*)::integer AS deleted FROM deleted
