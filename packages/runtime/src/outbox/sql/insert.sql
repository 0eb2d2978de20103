-- Writes outbox rows inside the caller's transaction; an id already in the table (pending, dead, or
-- delivered within the retention period) is left alone, which is how a repeated event or job id is relayed
-- once. The NOTIFY wakes every relay when (and only if) that transaction commits.
-- params: $1 ids text[], $2 kinds text[], $3 destinations text[], $4 bodies json[] (as text),
--         $5 max_attempts integer, $6 notification channel, $7 tenants text[] ('' for none: the relay's share, claim.sql)
-- result: one row { id } per row actually inserted
-- index:  jfast_outbox_pkey (ON CONFLICT)
WITH inserted AS (
  INSERT INTO jfast_outbox (id, kind, destination, body, max_attempts, tenant)
  SELECT r.id, r.kind, r.destination, r.body, $5, r.tenant
  FROM unnest($1::text[], $2::text[], $3::text[], $4::json[], $7::text[]) WITH ORDINALITY AS r(id, kind, destination, body, tenant, n)
  ORDER BY r.n
  ON CONFLICT (id) DO NOTHING
  RETURNING id
)
-- Identical notifications in one transaction are folded into one by PostgreSQL.
SELECT id, pg_notify($6, '') AS notified FROM inserted
