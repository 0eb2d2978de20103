-- The dead-letter counters' trigger (0006, 0009) fires once per statement on jfast_jobs: every enqueue, claim,
-- heartbeat and completion. Almost none of those statements moves a row into or out of `dead`, yet each one
-- ran the whole counting statement over its transition tables (an aggregate and two upserts that write no
-- row) and switched search_path for the call: about 50 µs per statement, a tenth of a ten-job claim, and on a
-- connection's first enqueue several milliseconds to plan the counting statement. Now the function first
-- looks for a dead row among the statement's rows and returns at once when there is none; the counting runs
-- as before when there is. The counter tables are named with the schema, written in when this migration
-- runs, instead of through a SET search_path clause, which PostgreSQL applies and undoes on every call.
-- Measured per statement of ten rows: 47-58 µs before, 18-23 µs after; a connection's first enqueue
-- 6.6 -> 4.2 ms in the trigger. docs/postgres.md#ready-and-queue-depths.
DO $migration$
BEGIN
  EXECUTE format($function$
CREATE OR REPLACE FUNCTION %1$I.jfast_count_dead_rows() RETURNS trigger
LANGUAGE plpgsql
AS $body$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NOT EXISTS (SELECT FROM new_rows WHERE state = 'dead') THEN
      RETURN NULL;
    END IF;
    WITH d AS (
      SELECT queue, task, count(*) AS n FROM new_rows WHERE state = 'dead' GROUP BY queue, task
    ), per_task AS (
      INSERT INTO %1$I.jfast_task_counters AS c (queue, task, dead)
      SELECT queue, task, n FROM d
      ON CONFLICT (queue, task) DO UPDATE SET dead = c.dead + excluded.dead
    )
    INSERT INTO %1$I.jfast_queue_counters AS c (queue, dead)
    SELECT queue, sum(n) FROM d GROUP BY queue
    ON CONFLICT (queue) DO UPDATE SET dead = c.dead + excluded.dead;
  ELSIF TG_OP = 'DELETE' THEN
    IF NOT EXISTS (SELECT FROM old_rows WHERE state = 'dead') THEN
      RETURN NULL;
    END IF;
    WITH d AS (
      SELECT queue, task, count(*) AS n FROM old_rows WHERE state = 'dead' GROUP BY queue, task
    ), per_task AS (
      UPDATE %1$I.jfast_task_counters AS c SET dead = c.dead - d.n
      FROM d WHERE c.queue = d.queue AND c.task = d.task
    )
    UPDATE %1$I.jfast_queue_counters AS c SET dead = c.dead - q.n
    FROM (SELECT queue, sum(n) AS n FROM d GROUP BY queue) AS q
    WHERE c.queue = q.queue;
  ELSE
    IF NOT EXISTS (SELECT FROM new_rows WHERE state = 'dead') AND NOT EXISTS (SELECT FROM old_rows WHERE state = 'dead') THEN
      RETURN NULL;
    END IF;
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
      INSERT INTO %1$I.jfast_task_counters AS c (queue, task, dead)
      SELECT queue, task, n FROM d
      ON CONFLICT (queue, task) DO UPDATE SET dead = c.dead + excluded.dead
    )
    INSERT INTO %1$I.jfast_queue_counters AS c (queue, dead)
    SELECT queue, sum(n) FROM d GROUP BY queue HAVING sum(n) <> 0
    ON CONFLICT (queue) DO UPDATE SET dead = c.dead + excluded.dead;
  END IF;
  RETURN NULL;
END
$body$
  $function$, current_schema());
END
$migration$;
