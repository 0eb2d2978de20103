-- What each notification named (docs/alerts.md#history): one line of detail, and for a promise the broken request
-- it names, the hop it is late at and the service it waits in. Bounded by the runtime (500 characters of detail).
ALTER TABLE jfast_alert_history
  ADD COLUMN detail      text,
  ADD COLUMN request_id  text,
  ADD COLUMN hop         text,
  ADD COLUMN hop_service text;
