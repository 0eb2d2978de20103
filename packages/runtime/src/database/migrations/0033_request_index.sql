-- A request's timeline (docs/admin-api.md#timeline) finds its jobs and outbox rows by request id without reading
-- the tables. Both indexes are partial: a job or row made outside a request (no request id) adds no entry, so
-- plain enqueues and claims do not maintain them.
CREATE INDEX jfast_jobs_request_idx ON jfast_jobs (request_id, created_at) WHERE request_id IS NOT NULL;
-- The request id rides inside the relayed body (a JobJSON or an EventJSON, a flow's plan has its steps' own).
CREATE INDEX jfast_outbox_request_idx ON jfast_outbox ((body ->> 'requestId'), created_at) WHERE (body ->> 'requestId') IS NOT NULL;
