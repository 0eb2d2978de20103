-- A flow step of a broker queue died (FlowStore.die: killed, or its worker lost on its last attempt): dead, with
-- the job as it ended, only from ready (running), so a death written twice counts once. At its first death it
-- counts once for each child declared onParentFailure = "run" (counted; not again after a retry); the others wait
-- for it to be retried. The flow's dead count grows by one. Children, then the flow, in id order.
-- params: $1 job id, $2 the job as it ended jsonb (its errors), $3 publish lease ms, $4 the attempt's start in
--         epoch ms, $5 how long it ran in ms (both null: no attempt's record, as for a worker lost; the step keeps
--         the timing it had)
-- result: { written, job } for each child made ready; one row with job null when none is
-- index:  jfast_flow_steps_pkey, jfast_flows_pkey
WITH before AS MATERIALIZED (
  SELECT job_id, state, counted FROM jfast_flow_steps WHERE job_id = $1 FOR UPDATE
),
done AS (
  UPDATE jfast_flow_steps AS j
  SET state = 'dead', finished_at = now(), job = $2::jsonb, publish_after = NULL, counted = true,
      started_at = coalesce(to_timestamp($4::double precision / 1000), j.started_at),
      duration_ms = coalesce($5::double precision, j.duration_ms)
  FROM before AS b
  WHERE j.job_id = b.job_id AND b.state = 'ready'
  RETURNING j.flow_id, j.children, b.counted AS was_counted
),
locked_children AS MATERIALIZED (
  SELECT j.job_id FROM jfast_flow_steps AS j, done AS d
  WHERE NOT d.was_counted AND j.job_id = ANY (d.children) AND j.state = 'waiting'
    AND j.job->'flow'->>'onParentFailure' = 'run'
  ORDER BY j.job_id
  FOR UPDATE OF j
),
children AS (
  UPDATE jfast_flow_steps AS j
  SET pending = j.pending - 1,
      state = CASE WHEN j.pending > 1 THEN 'waiting' ELSE 'ready' END,
      publish_after = CASE WHEN j.pending > 1 THEN NULL ELSE now() + $3::double precision * interval '1 millisecond' END
  WHERE j.job_id = ANY ((SELECT array_agg(job_id) FROM locked_children)::text[]) AND j.state = 'waiting'
  RETURNING j.state, j.job
),
flow AS (
  UPDATE jfast_flows AS f
  SET dead = f.dead + 1
  FROM done AS d
  WHERE f.id = d.flow_id AND (SELECT count(*) FROM children) >= 0
  RETURNING 1
)
SELECT (SELECT count(*) FROM done) AS written, (SELECT count(*) FROM flow) AS flows, ready.job
FROM (SELECT 1) AS one LEFT JOIN (SELECT job FROM children WHERE state = 'ready') AS ready ON true
