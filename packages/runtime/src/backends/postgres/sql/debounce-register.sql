-- Debounce (docs/flow-control.md#debounce): the job just inserted is its key's waiting job from now on (the key's row
-- in jfast_unique_keys, kept apart from unique keys by its scope). Same transaction as the insert, under the key's
-- advisory lock.
-- params: $1 queue, $2 scoped key, $3 job id
-- result: none
-- index:  jfast_unique_keys_pkey
INSERT INTO jfast_unique_keys AS k (queue, key, job_id, expires_at)
VALUES ($1, $2, $3, 'infinity')
ON CONFLICT (queue, key) DO UPDATE SET job_id = excluded.job_id, expires_at = excluded.expires_at
