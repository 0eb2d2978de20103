-- The outbox check of /ready and the admin API: backlog, lag, rows failing and dead rows.
-- params: none
-- result: one row { pending, failing, dead (integers), lag_ms (age of the oldest pending row, null when none),
--         last_error (the latest recorded error of a failing row, jsonb or null) }
-- index:  jfast_outbox_pending_seq_idx (count, oldest), jfast_outbox_failing_idx, jfast_outbox_dead_idx
SELECT
  (SELECT count(*) FROM jfast_outbox WHERE state = 'pending')::integer AS pending,
  (SELECT count(*) FROM jfast_outbox WHERE state = 'pending' AND errors <> '[]'::jsonb)::integer AS failing,
  (SELECT count(*) FROM jfast_outbox WHERE state = 'dead')::integer AS dead,
  (SELECT (extract(epoch FROM (now() - created_at)) * 1000)::double precision
     FROM jfast_outbox WHERE state = 'pending' ORDER BY seq LIMIT 1) AS lag_ms,
  (SELECT errors -> -1
     FROM jfast_outbox WHERE state = 'pending' AND errors <> '[]'::jsonb ORDER BY seq DESC LIMIT 1) AS last_error
