-- Alerts (docs/alerts.md): rules made at run time (those of jfast.toml are not stored), where each rule stands,
-- and every change of state with its webhook delivery. The evaluator's lease is the row 'alerts' of jfast_leases.
CREATE TABLE jfast_alert_rules (
  name       text PRIMARY KEY,
  spec       jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  updated_by text
);

CREATE TABLE jfast_alert_states (
  name       text PRIMARY KEY,
  state      text NOT NULL CHECK (state IN ('firing', 'resolved')),
  changed_at timestamptz NOT NULL,
  value      double precision
);

CREATE TABLE jfast_alert_history (
  id           bigserial PRIMARY KEY,
  alert        text NOT NULL,
  rule         text NOT NULL,
  state        text NOT NULL CHECK (state IN ('firing', 'resolved')),
  value        double precision,
  threshold    double precision NOT NULL,
  at           timestamptz NOT NULL,
  webhook      text NOT NULL,
  delivery     text NOT NULL CHECK (delivery IN ('pending', 'delivered', 'failed')),
  attempts     integer NOT NULL DEFAULT 0,
  last_error   text,
  delivered_at timestamptz
);
CREATE INDEX jfast_alert_history_alert ON jfast_alert_history (alert, id DESC);
