-- Takes unique keys for a queue whose broker cannot hold them (RabbitMQ; docs/tasks.md#unique-jobs): a key
-- nobody holds, or whose time has passed, becomes the given job's for hold_ms; a key still held keeps its job.
-- Every key's row is written and locked either way, so concurrent takes of one key queue up on it and each reads
-- the outcome of the one before: exactly one takes it.
-- params: $1 queue, $2 keys text[] (distinct), $3 job ids text[], $4 hold in ms float8[], $5 states as array
--         literals text[] (NULL: held for a period)
-- result: one row { key, job_id } per key: its holder after this statement
-- index:  jfast_unique_keys_pkey (ON CONFLICT)
INSERT INTO jfast_unique_keys AS k (queue, key, job_id, expires_at, states)
SELECT $1, u.key, u.job_id, now() + u.hold_ms * interval '1 millisecond', u.states::text[]
FROM unnest($2::text[], $3::text[], $4::float8[], $5::text[]) AS u(key, job_id, hold_ms, states)
ON CONFLICT (queue, key) DO UPDATE
SET job_id = CASE WHEN k.expires_at <= now() THEN excluded.job_id ELSE k.job_id END,
    states = CASE WHEN k.expires_at <= now() THEN excluded.states ELSE k.states END,
    expires_at = CASE WHEN k.expires_at <= now() THEN excluded.expires_at ELSE k.expires_at END
RETURNING key, job_id
