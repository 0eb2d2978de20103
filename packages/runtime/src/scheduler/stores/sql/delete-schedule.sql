-- Removes a stored schedule. Its claims in jfast_schedules stay and are pruned like any others.
-- params: $1 name
-- result: one row { deleted: 1 } when there was one
-- index:  jfast_schedule_definitions_pkey (name)
DELETE FROM jfast_schedule_definitions WHERE name = $1::text RETURNING 1 AS deleted
