-- A job's life (docs/jobs.md): each attempt's record (core/job-life.ts AttemptRun: start, duration, worker, outcome,
-- wait before the first, the last progress and the log lines kept) and the running job's progress. Two nullable
-- columns (adding them rewrites nothing). `runs` is appended by the outcome write that already happens (complete,
-- retry, kill, snooze); `progress` is written only by handlers that call tools.progress, at most about once a
-- second, and cleared by the outcome (its last value is in the attempt's record). Both go with the row.
ALTER TABLE jfast_jobs ADD COLUMN runs jsonb, ADD COLUMN progress jsonb;
