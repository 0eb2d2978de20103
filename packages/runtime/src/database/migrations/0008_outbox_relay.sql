-- What the outbox relay needs on top of 0003. A claimed row carries the claiming relay's id until it is
-- settled (delivered, retried later, dead or released), so a relay settles only rows it still holds and a
-- row left claimed by a relay that vanished is recognisable when its lease runs out.
ALTER TABLE jfast_outbox ADD COLUMN claimed_by text;

-- The oldest pending row (the outbox lag in /ready) without scanning the backlog.
CREATE INDEX jfast_outbox_pending_seq_idx ON jfast_outbox (seq) WHERE state = 'pending';
-- Pending rows whose delivery failed at least once: /ready is degraded while any exists.
CREATE INDEX jfast_outbox_failing_idx ON jfast_outbox (seq) WHERE state = 'pending' AND errors <> '[]'::jsonb;
-- Delivered rows are kept for [plugin.outbox] retention (a repeated id within it is recognised), then pruned
-- oldest first.
CREATE INDEX jfast_outbox_delivered_idx ON jfast_outbox (delivered_at) WHERE state = 'delivered';
