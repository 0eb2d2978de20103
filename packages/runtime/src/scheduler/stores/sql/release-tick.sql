-- Gives back a claim whose job could not be enqueued (queue in another system), so a later pass takes the
-- tick again.
-- params: $1 schedule name, $2 tick (timestamptz, ISO-8601)
-- result: none
-- index:  jfast_schedules_pkey
DELETE FROM jfast_schedules WHERE name = $1::text AND tick = $2::timestamptz
