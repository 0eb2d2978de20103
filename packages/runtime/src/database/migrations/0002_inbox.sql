-- Idempotency keys claimed by handlers (claimOnce / idempotentOn), written in the handler's own
-- transaction: a committed key means the work is done; a rolled-back one never existed.
CREATE TABLE jfast_inbox (
  consumer   text NOT NULL,
  key        text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer, key)
);

-- Pruning deletes the oldest keys past the retention period.
CREATE INDEX jfast_inbox_created_at_idx ON jfast_inbox (created_at);
