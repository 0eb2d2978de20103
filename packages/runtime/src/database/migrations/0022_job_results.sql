-- Results (docs/tasks.md#results): what a completed job's handler returned, or why it was not stored (too large,
-- not JSON). Two nullable columns (adding them rewrites nothing), written only by a completion that has a result
-- (complete-results.sql): a plain completion (complete.sql) writes neither. They go with the row when retention
-- prunes it, and keep_completed = false deletes the row on completion, result and all.
ALTER TABLE jfast_jobs ADD COLUMN result jsonb, ADD COLUMN result_omitted text;
