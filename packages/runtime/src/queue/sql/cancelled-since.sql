-- The cancellations recorded after the last ones a process read, oldest first.
-- params: $1 queue, $2 after this seq (bigint; 0: from the first), $3 limit
-- result: rows { seq, id }
-- index:  jfast_cancelled_jobs_pkey (seq range; the queue is a filter: one service's table holds few queues)
SELECT seq, id FROM jfast_cancelled_jobs
WHERE seq > $2 AND queue = $1
ORDER BY seq
LIMIT $3
