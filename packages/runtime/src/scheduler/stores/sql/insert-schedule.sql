-- Stores a new schedule unless one of that name exists.
-- params: $1 name, $2 spec jsonb (null for a declared one's state), $3 paused, $4 since, $5 updated_at, $6 updated_by
-- result: one row { stored: 1 } when stored, none when the name was taken
-- index:  jfast_schedule_definitions_pkey (name)
INSERT INTO jfast_schedule_definitions (name, spec, paused, since, updated_at, updated_by)
VALUES ($1::text, $2::jsonb, $3::boolean, $4::timestamptz, $5::timestamptz, $6::text)
ON CONFLICT (name) DO NOTHING
RETURNING 1 AS stored
