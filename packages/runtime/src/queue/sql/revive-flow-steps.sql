-- Dead flow steps of a broker queue retried from the dead letters (FlowStore.revive): ready again, their message
-- republished by the retry, and their flows' dead counts down by one each, so the flows run again. A step that
-- completed meanwhile (its retry ran first) is left as it is: complete-flow-step.sql counted it.
-- params: $1 job ids text[]
-- result: none
-- index:  jfast_flow_steps_pkey, jfast_flows_pkey
WITH revived AS (
  UPDATE jfast_flow_steps
  SET state = 'ready', published = true, publish_after = NULL, finished_at = NULL
  WHERE job_id = ANY ($1::text[]) AND state = 'dead'
  RETURNING flow_id
),
per_flow AS (
  SELECT flow_id, count(*)::integer AS n FROM revived GROUP BY flow_id
)
UPDATE jfast_flows AS f
SET dead = greatest(f.dead - p.n, 0)
FROM per_flow AS p
WHERE f.id = p.flow_id
