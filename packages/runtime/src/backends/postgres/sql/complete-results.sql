-- complete.sql for a batch in which some job has a result (core/result.ts): each job's result, or why it has
-- none, is written with its completion, and so is each attempt's record (core/job-life.ts, appended to runs;
-- the running job's progress is cleared: its last value is in the record). keep_completed = false runs
-- complete-delete.sql instead.
-- A job whose lease was taken over by another worker is skipped, result and all.
-- params: $1 job ids text[], $2 worker id, $3 results as JSON text[] (NULL: none), $4 why not stored text[] (NULL: stored or none),
--         $5 attempt records as JSON text[] (NULL: none)
-- result: none
-- index:  jfast_jobs_pkey (id = r.id)
UPDATE jfast_jobs AS j
SET state = 'completed', finished_at = now(), locked_by = NULL, locked_until = NULL,
    result = r.result::jsonb, result_omitted = r.omitted,
    runs = CASE WHEN r.run IS NULL THEN j.runs ELSE coalesce(j.runs, '[]'::jsonb) || r.run::jsonb END, progress = NULL
FROM unnest($1::text[], $3::text[], $4::text[], $5::text[]) AS r(id, result, omitted, run)
WHERE j.id = r.id AND j.locked_by = $2 AND j.state = 'running'
