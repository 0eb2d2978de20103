-- One page of the waiting jobs (ready, scheduled, a flow's steps waiting for their parents) and dead letters of a
-- queue whose payload or errors hold encrypted values, for `jfast keys rotate`. Reads the table once over, in id order.
-- params: $1 queue, $2 after this id ('' from the start), $3 limit
-- result: rows { id, state, payload (text, as stored), errors (text) }
-- index:  jfast_jobs_pkey (a maintenance scan; the text filters are not indexed)
SELECT id, state, payload::text AS payload, errors::text AS errors
FROM jfast_jobs
WHERE queue = $1 AND id > $2 AND state IN ('waiting', 'ready', 'dead')
  AND (payload::text LIKE '%"$enc"%' OR errors::text LIKE '%$enc:v1:%')
ORDER BY id
LIMIT $3
