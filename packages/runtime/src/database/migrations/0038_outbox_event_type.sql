-- A promise rule (docs/alerts.md#promises) reads the event rows of one type written in its window, within a request:
-- the index holds only event rows that carry a request id, by type and time, so a pass reads those rows and no other.
CREATE INDEX jfast_outbox_event_type_idx ON jfast_outbox ((body ->> 'type'), created_at) WHERE kind = 'event' AND (body ->> 'requestId') IS NOT NULL;
