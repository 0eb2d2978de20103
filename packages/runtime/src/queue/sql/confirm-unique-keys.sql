-- The jobs holding these state-held keys were published: held until their job leaves its states
-- (release-unique-keys.sql). A key whose pending time passed and that another job took meanwhile is left alone.
-- params: $1 queue, $2 keys text[], $3 job ids text[] (the holder of each key, in the same order)
-- result: none
-- index:  jfast_unique_keys_pkey
UPDATE jfast_unique_keys AS k
SET expires_at = 'infinity'
FROM unnest($2::text[], $3::text[]) AS u(key, job_id)
WHERE k.queue = $1 AND k.key = u.key AND k.job_id = u.job_id
