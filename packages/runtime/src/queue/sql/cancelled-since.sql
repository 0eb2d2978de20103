-- The cancellations recorded after the last ones a process read, oldest first.
-- params: $1 queue, $2 after this seq (bigint; 0: from the first), $3 limit
-- result: rows { seq, id }
-- index:  jfast_cancelled_jobs_seq_idx
SELECT seq, id FROM jfast_cancelled_jobs
WHERE queue = $1 AND seq > $2
ORDER BY seq
LIMIT $3
