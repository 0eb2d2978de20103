-- Records one admin mutation.
-- params: $1 id (text), $2 at (timestamptz), $3 actor, $4 role ("<role>" or "<role> via <dashboard token>"), $5 action, $6 ids (jsonb array, capped),
--         $7 count (integer, the full number), $8 filter (jsonb or null), $9 outcome (jsonb)
-- result: none
-- index:  primary key only
INSERT INTO jfast_admin_audit (id, at, actor, role, action, ids, count, filter, outcome)
VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8::jsonb, $9::jsonb)
