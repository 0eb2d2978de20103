-- Fair share across keys, each job's turn fixed when it comes due (docs/flow-control.md#fair-share-across-keys): a
-- job of a task with fairness alone gets its key's next turn (1/weight past the key's last one, never behind the
-- task's least waiting turn) when it is enqueued due, or, when it is due later (a delay, a retry's backoff, a
-- snooze), 'Infinity' until the claim places it (fair-place.sql). The claim then takes the lowest turns from one
-- index range, as a plain claim takes the oldest jobs, and writes nothing but the jobs it claims.
-- NULL for every other job.
ALTER TABLE jfast_jobs ADD COLUMN fair_turn double precision;
CREATE INDEX jfast_jobs_fair_idx ON jfast_jobs (queue, task, fair_turn, available_at, seq) WHERE phase = 'open' AND fair_turn IS NOT NULL;

-- The fair tasks' open jobs stored before now wait to be placed by the next claim, in the order they came due.
UPDATE jfast_jobs AS j
SET fair_turn = 'Infinity'
FROM jfast_task_limits AS l
WHERE l.queue = j.queue AND l.task = j.task AND j.phase = 'open' AND j.limit_key IS NOT NULL
  AND l.fair AND NOT l.per_key AND l.on_dead IS NULL AND l.key_rate_max IS NULL;

-- jfast_fair_keys keeps each key's last turn placed, found by its key (the primary key); the task's last turn of all
-- by this index. The turn order it had is read no more: with it, a lookup by key could be planned on it and read
-- every key of the task.
DROP INDEX jfast_fair_keys_turn_idx;
CREATE INDEX jfast_fair_keys_last_idx ON jfast_fair_keys (queue, task, turn);
