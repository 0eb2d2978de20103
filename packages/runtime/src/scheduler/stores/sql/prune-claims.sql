-- Deletes claims made before a cutoff, except the last claim of each schedule: that one is what tells a
-- restarted replica the schedule is not new and which tick it reached.
-- params: $1 cutoff (timestamptz, ISO-8601)
-- result: one row { deleted: count }
-- index:  jfast_schedules_claimed_at_idx (range on claimed_at); jfast_schedules_pkey for each name's max(tick)
WITH deleted AS (
  DELETE FROM jfast_schedules AS s
  WHERE s.claimed_at < $1::timestamptz
    AND s.tick < (SELECT max(m.tick) FROM jfast_schedules AS m WHERE m.name = s.name)
  RETURNING 1
)
SELECT count(*)::integer AS deleted FROM deleted
