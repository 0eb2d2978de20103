-- Fair share across keys at the cost of the batch claimed (docs/flow-control.md#fair-share-across-keys): the keys of
-- a fair task (fairness alone, without per-key concurrency, order or a per-key rate limit) that have open jobs, in
-- turn order. The enqueue adds a key (set-limit-keys.sql), the claim reads the first keys in turn order
-- (claim-fair.sql) instead of walking every key of the task, moves the keys it served on by their turns and drops
-- the keys left with no open job, their turn kept in jfast_key_turns for when they come back.
CREATE TABLE jfast_fair_keys (
  queue     text NOT NULL,
  task      text NOT NULL,
  limit_key text NOT NULL,
  -- The key's virtual time: the turns it took (1/weight per job started), never behind the least served key.
  turn      double precision NOT NULL,
  -- When the key last took a turn ('-infinity': never): of two tied turns, the key served longer ago goes first.
  served_at timestamptz NOT NULL DEFAULT '-infinity',
  PRIMARY KEY (queue, task, limit_key)
);
CREATE INDEX jfast_fair_keys_turn_idx ON jfast_fair_keys (queue, task, turn, served_at, limit_key);

-- The keys of fair tasks' open jobs stored before now.
INSERT INTO jfast_fair_keys (queue, task, limit_key, turn, served_at)
SELECT k.queue, k.task, k.limit_key, coalesce(t.served, 0), coalesce(t.served_at, '-infinity')
FROM (
  SELECT DISTINCT j.queue, j.task, j.limit_key
  FROM jfast_jobs AS j
  JOIN jfast_task_limits AS l ON l.queue = j.queue AND l.task = j.task
  WHERE j.phase = 'open' AND j.limit_key IS NOT NULL
    AND l.fair AND NOT l.per_key AND l.on_dead IS NULL AND l.key_rate_max IS NULL
) AS k
LEFT JOIN jfast_key_turns AS t ON t.queue = k.queue AND t.task = k.task AND t.limit_key = k.limit_key;
