-- One page of the job rows waiting for the relay or dead whose body holds encrypted values, for
-- `jfast keys rotate`, in seq order.
-- params: $1 after this seq (0 from the start), $2 limit
-- result: rows { id, seq, body (text, as stored) }
-- index:  jfast_outbox_pkey is not used: a maintenance scan of the table; the text filter is not indexed
SELECT id, seq, body::text AS body
FROM jfast_outbox
WHERE kind = 'job' AND state IN ('pending', 'dead') AND seq > $1 AND body::text LIKE '%"$enc"%'
ORDER BY seq
LIMIT $2
