-- The entries of some actions that name one job, newest first: the retries the job's detail marks.
-- params: $1 job id (text), $2 since (timestamptz: the job's creation, no entry about it is older), $3 actions (text[]),
--         $4 limit (integer)
-- result: rows { id, at, actor, role, action, ids, count, filter, outcome }
-- index:  jfast_admin_audit_at_idx (at DESC, id DESC): reads only the entries written since the job was created
SELECT id, at, actor, role, action, ids, count, filter, outcome
FROM jfast_admin_audit
WHERE at >= $2::timestamptz
  AND action = ANY($3::text[])
  AND ids @> jsonb_build_array($1::text)
ORDER BY at DESC, id DESC
LIMIT $4
