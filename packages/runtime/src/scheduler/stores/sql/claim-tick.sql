-- Claims a tick of a schedule unless a claim at or after it exists. Run under lock-schedule.sql in the
-- same transaction; the primary key would still turn a duplicate of the same tick into a no-op.
-- params: $1 schedule name, $2 tick (timestamptz, ISO-8601)
-- result: one row { claimed: 1 } when this call won, none otherwise
-- index:  jfast_schedules_pkey (name, tick): the NOT EXISTS probe and ON CONFLICT
INSERT INTO jfast_schedules (name, tick)
SELECT $1::text, $2::timestamptz
WHERE NOT EXISTS (SELECT 1 FROM jfast_schedules WHERE name = $1::text AND tick >= $2::timestamptz)
ON CONFLICT (name, tick) DO NOTHING
RETURNING 1 AS claimed
