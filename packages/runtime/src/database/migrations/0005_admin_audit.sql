-- The admin API's audit trail: one row per mutation (retry, discard, bulk replays), who made it, what it
-- selected and what came of it. Written by the admin router, read by the dashboard's audit page.
CREATE TABLE jfast_admin_audit (
  id      text PRIMARY KEY,
  at      timestamptz NOT NULL DEFAULT now(),
  actor   text NOT NULL,
  role    text NOT NULL,
  action  text NOT NULL,
  ids     jsonb NOT NULL,
  count   integer NOT NULL,
  filter  jsonb,
  outcome jsonb NOT NULL
);

-- The trail is read newest first, a page at a time.
CREATE INDEX jfast_admin_audit_at_idx ON jfast_admin_audit (at DESC, id DESC);
