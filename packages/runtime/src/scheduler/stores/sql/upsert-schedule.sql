-- Stores a schedule, replacing the one of that name.
-- params: $1 name, $2 spec jsonb (null for a declared one's state), $3 paused, $4 since, $5 updated_at, $6 updated_by
-- result: one row { stored: 1 }
-- index:  jfast_schedule_definitions_pkey (name)
INSERT INTO jfast_schedule_definitions (name, spec, paused, since, updated_at, updated_by)
VALUES ($1::text, $2::jsonb, $3::boolean, $4::timestamptz, $5::timestamptz, $6::text)
ON CONFLICT (name) DO UPDATE
  SET spec = EXCLUDED.spec, paused = EXCLUDED.paused, since = EXCLUDED.since,
      updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by
RETURNING 1 AS stored
