-- How many ticks of a schedule were claimed in a window, and whether it was claimed before it (it is not a
-- new schedule), for the admin API's missed ticks.
-- params: $1 schedule name, $2 from (timestamptz, inclusive), $3 to (timestamptz, inclusive)
-- result: one row { claimed: integer, first_ms: float8 or null, before: boolean }
-- index:  jfast_schedules_pkey (name, tick): a range of one name's ticks, and one probe below it
SELECT count(*)::integer AS claimed,
       round(extract(epoch FROM min(tick)) * 1000)::float8 AS first_ms,
       EXISTS (SELECT 1 FROM jfast_schedules WHERE name = $1::text AND tick < $2::timestamptz) AS before
FROM jfast_schedules
WHERE name = $1::text AND tick >= $2::timestamptz AND tick <= $3::timestamptz
