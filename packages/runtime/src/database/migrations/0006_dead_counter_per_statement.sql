-- Replaces the per-row dead-counter triggers of 0001 with per-statement ones. A statement that moves many
-- rows at once (retrying or discarding every dead letter, a bulk import) fired the row trigger once per
-- row, and each of those updated the same counter row inside one transaction: a chain of row versions
-- that every next update walks, quadratic in the number of rows. Per statement, the change is summed
-- over the transition tables and written once per queue; a statement that moves no row into or out of
-- `dead` (every claim, heartbeat and completion) writes nothing and takes no lock on the counter.
DROP TRIGGER jfast_jobs_dead_on_insert ON jfast_jobs;
DROP TRIGGER jfast_jobs_dead_on_update ON jfast_jobs;
DROP TRIGGER jfast_jobs_dead_on_delete ON jfast_jobs;
DROP FUNCTION jfast_count_dead();

CREATE FUNCTION jfast_count_dead_rows() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO jfast_queue_counters AS c (queue, dead)
    SELECT queue, count(*) FROM new_rows WHERE state = 'dead' GROUP BY queue
    ON CONFLICT (queue) DO UPDATE SET dead = c.dead + excluded.dead;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE jfast_queue_counters AS c SET dead = c.dead - d.n
    FROM (SELECT queue, count(*) AS n FROM old_rows WHERE state = 'dead' GROUP BY queue) AS d
    WHERE c.queue = d.queue;
  ELSE
    INSERT INTO jfast_queue_counters AS c (queue, dead)
    SELECT queue, sum(delta)
    FROM (
      SELECT queue, 1 AS delta FROM new_rows WHERE state = 'dead'
      UNION ALL
      SELECT queue, -1 AS delta FROM old_rows WHERE state = 'dead'
    ) AS d
    GROUP BY queue
    HAVING sum(delta) <> 0
    ON CONFLICT (queue) DO UPDATE SET dead = c.dead + excluded.dead;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER jfast_jobs_dead_after_insert AFTER INSERT ON jfast_jobs
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION jfast_count_dead_rows();
CREATE TRIGGER jfast_jobs_dead_after_update AFTER UPDATE ON jfast_jobs
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION jfast_count_dead_rows();
CREATE TRIGGER jfast_jobs_dead_after_delete AFTER DELETE ON jfast_jobs
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION jfast_count_dead_rows();
