-- What a flow step reads of the steps it runs after (tools.flow.results): each parent that completed (its result;
-- has_result tells a stored JSON null from none) or died (its last error). Others are not returned.
-- params: $1 queue, $2 job ids text[]
-- result: rows { id, state, result, has_result, last_error }
-- index:  jfast_jobs_pkey
SELECT id, state, result, result IS NOT NULL AS has_result, errors->-1 AS last_error
FROM jfast_jobs
WHERE id = ANY ($2::text[]) AND queue = $1 AND state IN ('completed', 'dead')
