-- Flow steps whose messages the broker confirmed (FlowStore.published): the sweep leaves them alone.
-- params: $1 job ids text[]
-- result: none
-- index:  jfast_flow_steps_pkey
UPDATE jfast_flow_steps SET published = true, publish_after = NULL
WHERE job_id = ANY ($1::text[]) AND NOT published
