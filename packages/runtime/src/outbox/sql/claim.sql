-- Takes up to $1 due rows for one relay, shared round robin across tenants (docs/flow-control.md#outbox-and-events).
-- The tenants with rows pending form a ring in tenant order; this relay's claim starts after $4, the last tenant its
-- previous claim served, and takes at most $1 tenants from there (wrapping around). Each of them gets its oldest
-- due rows in turn (first the oldest of every one, then the second, …), at most its share of the batch, so a tenant
-- with a large backlog cannot hold back another tenant's rows, and the next claim goes on around the ring. Rows
-- without a tenant are one more tenant (''). SKIP LOCKED: relays in other processes claiming at the same moment
-- get other rows, never the same one. The claim commits at once (no transaction stays open while the relay talks
-- to the queue or the broker): the row is leased by pushing available_at out by $2 ms and naming the relay in
-- claimed_by, and the attempt is counted now, so an attempt whose relay vanishes is not free. previous_claim is
-- set when the last claim was never settled (its relay stopped mid-send).
-- params: $1 batch size (integer), $2 lease in ms (double precision), $3 relay id (text), $4 the tenant after which
--         the ring is read (text; '' at first)
-- result: the claimed rows { id, seq, kind, destination, body (text), attempts, max_attempts, created_at,
--         previous_claim, tenant, place (the tenant's place in this claim's part of the ring) }
-- index:  jfast_outbox_tenant_idx (tenant, available_at, seq) WHERE state = 'pending': one descent per tenant read
--         (a loose index scan, at most 2 × $1 of them), then one range read of at most the share per tenant;
--         jfast_outbox_pkey to lock the chosen rows. The cost grows with the batch, not with the tenants or rows.
WITH RECURSIVE after_cursor AS (
  (SELECT tenant FROM jfast_outbox WHERE state = 'pending' AND tenant > $4 ORDER BY tenant LIMIT 1)
  UNION ALL
  SELECT (SELECT o.tenant FROM jfast_outbox AS o WHERE o.state = 'pending' AND o.tenant > c.tenant ORDER BY o.tenant LIMIT 1)
  FROM after_cursor AS c
  WHERE c.tenant IS NOT NULL
),
from_start AS (
  (SELECT tenant FROM jfast_outbox WHERE state = 'pending' ORDER BY tenant LIMIT 1)
  UNION ALL
  SELECT (SELECT o.tenant FROM jfast_outbox AS o WHERE o.state = 'pending' AND o.tenant > c.tenant AND o.tenant <= $4 ORDER BY o.tenant LIMIT 1)
  FROM from_start AS c
  WHERE c.tenant IS NOT NULL
),
-- The recursive scans run only as far as these limits read them.
ring AS (
  SELECT tenant, row_number() OVER () AS place
  FROM (
    (SELECT tenant FROM after_cursor WHERE tenant IS NOT NULL LIMIT $1)
    UNION ALL
    (SELECT tenant FROM from_start WHERE tenant IS NOT NULL AND tenant <= $4 LIMIT $1)
  ) AS r
  LIMIT $1
),
share AS (
  SELECT greatest(1, ceil($1::double precision / greatest(count(*), 1)))::integer AS per FROM ring
),
picked AS (
  SELECT r.id, t.place
  FROM ring AS t
  CROSS JOIN share
  CROSS JOIN LATERAL (
    SELECT o.id, row_number() OVER (ORDER BY o.available_at, o.seq) AS turn
    FROM (
      SELECT id, available_at, seq FROM jfast_outbox
      WHERE state = 'pending' AND tenant = t.tenant AND available_at <= now()
      ORDER BY available_at, seq
      LIMIT share.per
    ) AS o
  ) AS r
  ORDER BY r.turn, t.place
  LIMIT $1
),
due AS (
  SELECT o.id, o.claimed_by, p.place
  FROM jfast_outbox AS o
  JOIN picked AS p ON p.id = o.id
  WHERE o.state = 'pending' AND o.available_at <= now()
  FOR UPDATE OF o SKIP LOCKED
)
UPDATE jfast_outbox AS o
SET attempts = o.attempts + 1,
    available_at = now() + $2::double precision * interval '1 millisecond',
    claimed_by = $3
FROM due
WHERE o.id = due.id
RETURNING o.id, o.seq, o.kind, o.destination, o.body::text AS body, o.attempts, o.max_attempts, o.created_at,
          due.claimed_by AS previous_claim, o.tenant, due.place
