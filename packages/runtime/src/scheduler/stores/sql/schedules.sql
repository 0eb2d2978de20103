-- Schedules made at run time, and the pause state of declared ones. Read by every process on every pass.
-- params: none
-- result: { name, spec (jsonb or null), paused, since_ms, updated_ms, updated_by } per stored schedule
-- index:  none needed: a handful of rows, read whole
SELECT name, spec, paused,
       round(extract(epoch FROM since) * 1000)::float8 AS since_ms,
       round(extract(epoch FROM updated_at) * 1000)::float8 AS updated_ms,
       updated_by
FROM jfast_schedule_definitions
