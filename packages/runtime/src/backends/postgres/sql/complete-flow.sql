-- complete-results.sql for a batch of flow steps (a job with `flow`), and the fan-in (docs/postgres.md#flows): the
-- steps are marked completed and, in the same statement, each one counts once for each of its children and for its
-- flow. A child whose last parent this was becomes ready here. Exactly once: a step counts only through the row
-- this statement moves from running to completed, conditional on its worker and state, so an outcome written twice
-- (or after the lease passed to another worker) moves no row and counts nothing; parents finishing at once in
-- several processes each take the child's row lock in turn and subtract from the value the one before left
-- (READ COMMITTED re-reads the updated row), so exactly one of them sees the count reach 0.
-- A child declared onParentFailure = "run" was already counted when the parent died (flow_counted), and is not
-- counted again by its completion after a retry. The children, then the flows, are locked in id order before
-- they are written, so two batches sharing children cannot deadlock on them.
-- A step that spawned steps (tools.flow.spawn) comes alone, after spawn-steps.sql wrote them and added them to its
-- children in the same transaction: its flow's total grows by their number ($6) here, with its completion.
-- params: $1 job ids text[], $2 worker id, $3 results as JSON text[] (NULL: none), $4 why not stored text[]
--         (NULL: stored or none), $5 notification channel, $6 steps each one spawned integer[] (NULL: none),
--         $7 attempt records as JSON text[] (NULL: none; appended to runs, core/job-life.ts)
-- result: one row { completed, ready, notified }: steps completed, children made ready (a NOTIFY when any)
-- index:  jfast_jobs_pkey (parents by id, children by id), jfast_flows_pkey
WITH done AS (
  UPDATE jfast_jobs AS j
  SET state = 'completed', finished_at = now(), locked_by = NULL, locked_until = NULL,
      result = r.result::jsonb, result_omitted = r.omitted,
      runs = CASE WHEN r.run IS NULL THEN j.runs ELSE coalesce(j.runs, '[]'::jsonb) || r.run::jsonb END, progress = NULL
  FROM unnest($1::text[], $3::text[], $4::text[], $6::integer[], $7::text[]) AS r(id, result, omitted, spawned, run)
  WHERE j.id = r.id AND j.locked_by = $2 AND j.state = 'running'
  RETURNING j.id, j.flow_id, j.flow_children, j.flow_counted, coalesce(r.spawned, 0) AS spawned
),
counts AS (
  SELECT c.id, count(*)::integer AS parents, (count(*) FILTER (WHERE NOT d.flow_counted))::integer AS uncounted
  FROM done AS d CROSS JOIN LATERAL unnest(d.flow_children) AS c(id)
  GROUP BY c.id
),
locked_children AS MATERIALIZED (
  SELECT j.id FROM jfast_jobs AS j
  WHERE j.id IN (SELECT id FROM counts) AND j.state = 'waiting'
  ORDER BY j.id
  FOR UPDATE
),
children AS (
  UPDATE jfast_jobs AS j
  SET flow_pending = j.flow_pending - CASE WHEN j.flow->>'onParentFailure' = 'run' THEN c.uncounted ELSE c.parents END,
      state = CASE WHEN j.flow_pending - CASE WHEN j.flow->>'onParentFailure' = 'run' THEN c.uncounted ELSE c.parents END > 0
                   THEN 'waiting' ELSE 'ready' END
  FROM counts AS c
  -- The uncorrelated subquery runs once, before the update reads a row: every child is locked, in order, first.
  WHERE j.id = ANY ((SELECT array_agg(id) FROM locked_children)::text[]) AND j.id = c.id AND j.state = 'waiting'
    AND CASE WHEN j.flow->>'onParentFailure' = 'run' THEN c.uncounted ELSE c.parents END > 0
  RETURNING j.state
),
per_flow AS (
  SELECT flow_id AS id, count(*)::integer AS n, sum(spawned)::integer AS added FROM done WHERE flow_id IS NOT NULL GROUP BY flow_id
),
locked_flows AS MATERIALIZED (
  -- After the children (the one-time condition waits for their update): children first, then flows, in id order.
  SELECT id FROM jfast_flows
  WHERE id IN (SELECT id FROM per_flow) AND (SELECT count(*) FROM children) >= 0
  ORDER BY id
  FOR UPDATE
),
flows AS (
  UPDATE jfast_flows AS f
  SET completed = f.completed + p.n, total = f.total + p.added,
      finished_at = CASE WHEN f.finished_at IS NULL AND f.completed + p.n >= f.total + p.added THEN now() ELSE f.finished_at END
  FROM per_flow AS p
  WHERE f.id = ANY ((SELECT array_agg(id) FROM locked_flows)::text[]) AND f.id = p.id
  RETURNING 1
),
made_ready AS (
  SELECT count(*) AS n FROM children WHERE state = 'ready'
)
SELECT (SELECT count(*) FROM done) AS completed,
       (SELECT n FROM made_ready) AS ready,
       (SELECT count(*) FROM flows) AS flows,
       (SELECT pg_notify($5, '') FROM made_ready WHERE n > 0) AS notified
