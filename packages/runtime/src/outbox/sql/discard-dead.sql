-- Deletes dead rows for good.
-- params: $1 ids text[] (null: every dead row)
-- result: one row { id } per row deleted
-- index:  jfast_outbox_pkey (by ids), jfast_outbox_dead_idx (all)
DELETE FROM jfast_outbox
WHERE state = 'dead' AND ($1::text[] IS NULL OR id = ANY($1::text[]))
RETURNING id
