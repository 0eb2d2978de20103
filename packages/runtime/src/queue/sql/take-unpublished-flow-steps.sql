-- The sweep (FlowStore.takeUnpublished): ready flow steps of the queue never published, whose publisher had
-- $3 ms and did not confirm (it died between its commit and its publish), taken for another $3 ms. SKIP LOCKED:
-- two processes sweeping at once take different steps.
-- params: $1 queue, $2 limit, $3 publish lease ms
-- result: rows { job }
-- index:  jfast_flow_steps_unpublished_idx (queue, publish_after) WHERE state = 'ready' AND NOT published
UPDATE jfast_flow_steps
SET publish_after = now() + $3::double precision * interval '1 millisecond'
WHERE job_id IN (
  SELECT job_id FROM jfast_flow_steps
  WHERE queue = $1 AND state = 'ready' AND NOT published AND publish_after <= now()
  ORDER BY publish_after
  LIMIT $2
  FOR UPDATE SKIP LOCKED
)
RETURNING job
