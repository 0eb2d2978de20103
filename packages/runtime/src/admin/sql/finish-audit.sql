-- Records what came of an admin action whose entry insert-audit.sql wrote before it ran (outcome pending).
-- The table's trigger allows this one update of a pending entry and nothing else (migration 0016).
-- params: $1 id, $2 ids (jsonb array, capped), $3 count (the full number), $4 outcome (jsonb)
-- result: rows { id } (none if the entry was already finished)
-- index:  primary key
UPDATE jfast_admin_audit
SET ids = $2::jsonb, count = $3, outcome = $4::jsonb
WHERE id = $1 AND outcome = '{"pending": true}'::jsonb
RETURNING id
