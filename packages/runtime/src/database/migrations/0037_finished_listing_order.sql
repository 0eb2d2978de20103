-- Completed and cancelled jobs are listed by the time they finished, then seq (list-finished.sql, docs/jobs.md#timing):
-- the retention index gains seq, so a page reads the index in exactly that order instead of sorting every job that
-- finished in the same instant. Pruning reads it by its (queue, phase, finished_at) prefix as before.
DROP INDEX jfast_jobs_finished_idx;
CREATE INDEX jfast_jobs_finished_idx ON jfast_jobs (queue, phase, finished_at, seq) WHERE phase IN ('completed', 'cancelled');
