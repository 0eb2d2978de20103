-- complete.sql for a batch of plain completions (no result, no progress, no log line) with each attempt's timing
-- (core/job-life.ts): the attempt's record is built here from three numbers per job rather than sent as JSON, and
-- appended to runs with the completion. A batch with results or lines runs complete-results.sql instead.
-- A job whose lease was taken over by another worker is skipped.
-- params: $1 job ids text[], $2 worker id, $3 starts (epoch ms) float8[], $4 durations (ms) float8[],
--         $5 waits before a first attempt (ms, NULL for a later one) float8[]
-- result: none
-- index:  jfast_jobs_pkey (id = r.id)
UPDATE jfast_jobs AS j
SET state = 'completed', finished_at = now(), locked_by = NULL, locked_until = NULL, progress = NULL,
    runs = coalesce(j.runs, '[]'::jsonb) || jsonb_strip_nulls(jsonb_build_object(
      'attempt', j.attempts, 'startedAt', r.started, 'durationMs', r.ms, 'workerId', $2::text, 'outcome', 'completed', 'waitMs', r.waited))
FROM unnest($1::text[], $3::float8[], $4::float8[], $5::float8[]) AS r(id, started, ms, waited)
WHERE j.id = r.id AND j.locked_by = $2 AND j.state = 'running'
