-- One page of the audit trail, newest first; $2 continues after the entry with that id. With $3, only entries
-- whose filter names that tenant (read newest first until a page is full: the trail holds mutations only).
-- params: $1 limit (integer), $2 before id (text or null), $3 tenant (text or null)
-- result: rows { id, at, actor, role, action, ids, count, filter, outcome }
-- index:  jfast_admin_audit_at_idx (at DESC, id DESC): a keyset page, never a scan of the whole trail
SELECT id, at, actor, role, action, ids, count, filter, outcome
FROM jfast_admin_audit
WHERE ($2::text IS NULL OR (at, id) < (SELECT at, id FROM jfast_admin_audit WHERE id = $2::text))
  AND ($3::text IS NULL OR filter ->> 'tenantId' = $3::text OR filter ->> 'tenant' = $3::text)
ORDER BY at DESC, id DESC
LIMIT $1
