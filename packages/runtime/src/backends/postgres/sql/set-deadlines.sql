-- Stores the deadlines of jobs just inserted (docs/flow-control.md#deadlines), in the transaction of their insert, so
-- no claim sees one of them without it. Only batches with a deadline run this; plain batches never do.
-- params: $1 queue, $2 job ids text[], $3 deadlines as epoch ms float8[]
-- result: none
-- index:  jfast_jobs_pkey
UPDATE jfast_jobs AS j
SET expires_at = to_timestamp(d.at / 1000)
FROM unnest($2::text[], $3::float8[]) AS d(id, at)
WHERE j.id = d.id AND j.queue = $1
