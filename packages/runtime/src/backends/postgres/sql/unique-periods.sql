-- Takes the period-held unique keys of a batch (docs/tasks.md#unique-jobs): a key nobody holds, or whose period
-- has passed, becomes the given job's until now + its period; a key still held keeps its job. Every key's row
-- is written and locked either way, so concurrent enqueues of one key queue up on it and each reads the one
-- before's outcome: exactly one takes the key. Runs in the transaction that inserts the jobs (enqueue-unique.sql),
-- so a key is never held by a job that was not written.
-- params: $1 queue, $2 scoped keys text[] (distinct), $3 job ids text[], $4 periods in ms float8[]
-- result: one row { key, job_id } per key: job_id is the holder after this statement (the given job's when it took it)
-- index:  jfast_unique_keys_pkey
INSERT INTO jfast_unique_keys AS p (queue, key, job_id, expires_at)
SELECT $1, k.key, k.job_id, now() + k.period_ms * interval '1 millisecond'
FROM unnest($2::text[], $3::text[], $4::float8[]) AS k(key, job_id, period_ms)
ON CONFLICT (queue, key) DO UPDATE
SET job_id = CASE WHEN p.expires_at <= now() THEN excluded.job_id ELSE p.job_id END,
    expires_at = CASE WHEN p.expires_at <= now() THEN excluded.expires_at ELSE p.expires_at END
RETURNING key, job_id
