-- Job priorities (docs/tasks.md#priority): 0 runs first, 9 last, 5 unless chosen.
--
-- A constant default adds the column without rewriting the table; NOT VALID skips checking every existing row
-- (each holds the default). smallint: ten values, two bytes.
ALTER TABLE jfast_jobs ADD COLUMN priority smallint NOT NULL DEFAULT 5;
ALTER TABLE jfast_jobs ADD CONSTRAINT jfast_jobs_priority_check CHECK (priority BETWEEN 0 AND 9) NOT VALID;

-- The claim's index: the open jobs with priority as the second key. The claim reads it once per priority, each
-- read a range (queue, priority, available_at <= now()) in availability then enqueue order, and stops at its
-- limit; with priority anywhere else it would read every due job to sort them, or pass over every delayed one.
-- jfast_jobs_open_idx stays for what reads the open jobs in time order (depths, the next due time, listings).
-- A claim still changes no indexed column (priority never changes once enqueued): claims stay HOT (0013).
CREATE INDEX jfast_jobs_claim_idx ON jfast_jobs (queue, priority, available_at, seq) WHERE phase = 'open';
