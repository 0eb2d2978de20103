-- Before fair-keys-drop.sql when the claim that found the keys empty ran on its own and has committed: locks the
-- keys again, waiting for an enqueue adding a job to one of them, so that the drop's fresh snapshot sees its job.
-- In the order set-limit-keys.sql locks them.
-- params: $1 queue, $2 tasks text[], $3 keys text[]
-- result: rows { limit_key }, the keys locked
-- index:  jfast_fair_keys_pkey
SELECT fk.limit_key
FROM jfast_fair_keys AS fk
JOIN unnest($2::text[], $3::text[]) AS e(task, limit_key) ON fk.task = e.task AND fk.limit_key = e.limit_key
WHERE fk.queue = $1
ORDER BY fk.task, fk.limit_key
FOR UPDATE OF fk
