-- The last claimed tick of each named schedule. A name with no row is a new schedule.
-- params: $1 schedule names text[]
-- result: one row { name, tick_ms: epoch milliseconds as float8 } per schedule that has a claim
-- index:  jfast_schedules_pkey (name, tick): max(tick) per name is read from the end of each name's range
SELECT name, round(extract(epoch FROM max(tick)) * 1000)::float8 AS tick_ms
FROM jfast_schedules
WHERE name = ANY($1::text[])
GROUP BY name
