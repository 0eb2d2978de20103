-- Dead letters per task, for the admin's queues view: counting a million dead rows per dashboard refresh is
-- what the queue counter of 0001 exists to avoid, and the same holds per task. The per-statement trigger of
-- 0006 now sums each statement's change per (queue, task) once and writes both counters from that sum; a
-- statement that moves no row into or out of `dead` (every claim, heartbeat and completion) still writes
-- nothing and takes no lock on either counter.
CREATE TABLE jfast_task_counters (
  queue text NOT NULL,
  task  text NOT NULL,
  dead  bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (queue, task)
);

INSERT INTO jfast_task_counters (queue, task, dead)
SELECT queue, task, count(*) FROM jfast_jobs WHERE state = 'dead' GROUP BY queue, task;

CREATE OR REPLACE FUNCTION jfast_count_dead_rows() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    WITH d AS (
      SELECT queue, task, count(*) AS n FROM new_rows WHERE state = 'dead' GROUP BY queue, task
    ), per_task AS (
      INSERT INTO jfast_task_counters AS c (queue, task, dead)
      SELECT queue, task, n FROM d
      ON CONFLICT (queue, task) DO UPDATE SET dead = c.dead + excluded.dead
    )
    INSERT INTO jfast_queue_counters AS c (queue, dead)
    SELECT queue, sum(n) FROM d GROUP BY queue
    ON CONFLICT (queue) DO UPDATE SET dead = c.dead + excluded.dead;
  ELSIF TG_OP = 'DELETE' THEN
    WITH d AS (
      SELECT queue, task, count(*) AS n FROM old_rows WHERE state = 'dead' GROUP BY queue, task
    ), per_task AS (
      UPDATE jfast_task_counters AS c SET dead = c.dead - d.n
      FROM d WHERE c.queue = d.queue AND c.task = d.task
    )
    UPDATE jfast_queue_counters AS c SET dead = c.dead - q.n
    FROM (SELECT queue, sum(n) AS n FROM d GROUP BY queue) AS q
    WHERE c.queue = q.queue;
  ELSE
    WITH d AS (
      SELECT queue, task, sum(delta) AS n
      FROM (
        SELECT queue, task, 1 AS delta FROM new_rows WHERE state = 'dead'
        UNION ALL
        SELECT queue, task, -1 AS delta FROM old_rows WHERE state = 'dead'
      ) AS moved
      GROUP BY queue, task
      HAVING sum(delta) <> 0
    ), per_task AS (
      INSERT INTO jfast_task_counters AS c (queue, task, dead)
      SELECT queue, task, n FROM d
      ON CONFLICT (queue, task) DO UPDATE SET dead = c.dead + excluded.dead
    )
    INSERT INTO jfast_queue_counters AS c (queue, dead)
    SELECT queue, sum(n) FROM d GROUP BY queue HAVING sum(n) <> 0
    ON CONFLICT (queue) DO UPDATE SET dead = c.dead + excluded.dead;
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION jfast_reset_counters() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
  DELETE FROM jfast_queue_counters;
  DELETE FROM jfast_task_counters;
  RETURN NULL;
END
$$;
