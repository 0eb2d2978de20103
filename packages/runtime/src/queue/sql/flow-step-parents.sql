-- What a step reads of its parents (FlowStore.parentOutcomes): the finished ones, completed (with their result)
-- or dead (with their last error).
-- params: $1 job ids text[]
-- result: rows { id, state, result, has_result, last_error }
-- index:  jfast_flow_steps_pkey
SELECT job_id AS id, state, result, result IS NOT NULL AS has_result, job->'errors'->-1 AS last_error
FROM jfast_flow_steps
WHERE job_id = ANY ($1::text[]) AND state IN ('completed', 'dead')
