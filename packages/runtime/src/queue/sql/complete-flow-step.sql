-- Completes a flow step of a broker queue and does its fan-in (FlowStore.complete; docs/rabbitmq.md#flows), in one
-- statement: the step moves to completed only from ready (running) or dead (retried, before revive-flow-steps.sql
-- ran), so a completion written twice (a redelivered message) moves nothing and counts nothing. Each child is
-- counted once, under its row lock: parents finishing at once in several processes take it in turn and subtract
-- from what the one before left, so exactly one sees the count reach 0 and makes it ready. A child declared
-- onParentFailure = "run" was counted at the step's death already (counted). The step's spawned steps are written
-- with it, counted for it already (planSpawn's pending leaves it out). Children, then the flow, in id order.
-- params: $1 job id, $2 the job as it ended jsonb, $3 result jsonb (null: none), $4 why none was stored,
--         $5 spawned steps as JSON [{ id, job, children, pending, direct }] (null: none), $6 publish lease ms,
--         $7 the attempt's start in epoch ms, $8 how long it ran in ms (both null: no attempt's record; the step
--         keeps the timing it had)
-- result: { written, job } for each step made ready; one row with job null when none is
-- index:  jfast_flow_steps_pkey, jfast_flows_pkey
WITH before AS MATERIALIZED (
  SELECT job_id, state FROM jfast_flow_steps WHERE job_id = $1 FOR UPDATE
),
spawned AS MATERIALIZED (
  SELECT s.id, s.job, s.children, s.pending, s.direct
  FROM jsonb_to_recordset(coalesce($5::jsonb, '[]'::jsonb)) AS s(id text, job jsonb, children jsonb, pending integer, direct boolean)
),
done AS (
  UPDATE jfast_flow_steps AS j
  SET state = 'completed', finished_at = now(), job = $2::jsonb, result = $3::jsonb, result_omitted = $4,
      publish_after = NULL, children = j.children || ARRAY(SELECT id FROM spawned WHERE direct),
      started_at = coalesce(to_timestamp($7::double precision / 1000), j.started_at),
      duration_ms = coalesce($8::double precision, j.duration_ms)
  FROM before AS b
  WHERE j.job_id = b.job_id AND b.state IN ('ready', 'dead')
  RETURNING j.flow_id, j.queue, j.children, j.counted, b.state AS was
),
locked_children AS MATERIALIZED (
  SELECT j.job_id FROM jfast_flow_steps AS j, done AS d
  WHERE j.job_id = ANY (d.children) AND j.job_id NOT IN (SELECT id FROM spawned) AND j.state = 'waiting'
    AND NOT (d.counted AND coalesce(j.job->'flow'->>'onParentFailure', '') = 'run')
  ORDER BY j.job_id
  FOR UPDATE OF j
),
children AS (
  UPDATE jfast_flow_steps AS j
  SET pending = j.pending - 1,
      state = CASE WHEN j.pending > 1 THEN 'waiting' ELSE 'ready' END,
      publish_after = CASE WHEN j.pending > 1 THEN NULL ELSE now() + $6::double precision * interval '1 millisecond' END
  -- The uncorrelated subquery runs once, before the update reads a row: every child is locked, in order, first.
  WHERE j.job_id = ANY ((SELECT array_agg(job_id) FROM locked_children)::text[]) AND j.state = 'waiting'
  RETURNING j.state, j.job
),
added AS (
  INSERT INTO jfast_flow_steps (job_id, flow_id, queue, job, children, pending, state, publish_after)
  SELECT s.id, d.flow_id, d.queue, s.job, ARRAY(SELECT jsonb_array_elements_text(s.children)), s.pending,
         CASE WHEN s.pending > 0 THEN 'waiting' ELSE 'ready' END,
         CASE WHEN s.pending > 0 THEN NULL ELSE now() + $6::double precision * interval '1 millisecond' END
  FROM done AS d, spawned AS s
  ON CONFLICT (job_id) DO NOTHING
  RETURNING state, job
),
locked_flow AS MATERIALIZED (
  -- After the children (the one-time condition waits for their update).
  SELECT f.id FROM jfast_flows AS f, done AS d
  WHERE f.id = d.flow_id AND (SELECT count(*) FROM children) >= 0
  FOR UPDATE OF f
),
flow AS (
  UPDATE jfast_flows AS f
  SET completed = f.completed + 1,
      total = f.total + (SELECT count(*) FROM spawned),
      dead = CASE WHEN d.was = 'dead' AND f.dead > 0 THEN f.dead - 1 ELSE f.dead END,
      finished_at = CASE WHEN f.finished_at IS NULL AND f.completed + 1 >= f.total + (SELECT count(*) FROM spawned)
                         THEN now() ELSE f.finished_at END
  FROM done AS d
  WHERE f.id = (SELECT id FROM locked_flow)
  RETURNING 1
),
ready AS (
  SELECT job FROM children WHERE state = 'ready'
  UNION ALL
  SELECT job FROM added WHERE state = 'ready'
)
SELECT (SELECT count(*) FROM done) AS written, (SELECT count(*) FROM flow) AS flows, ready.job
FROM (SELECT 1) AS one LEFT JOIN ready ON true
