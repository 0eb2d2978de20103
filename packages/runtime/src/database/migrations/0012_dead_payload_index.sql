-- Finding dead letters by a payload field ("every dead charge of customer 42") without reading them all: a GIN
-- index over the payload of dead rows only, with jsonb_path_ops (it answers containment, `@>`, and is smaller
-- than the default operator class). The payload column is json (stored byte for byte), so the index is on its
-- jsonb cast, and the search writes the same expression. Live and completed rows never enter it, so claims
-- and completions do not maintain it; a death, a retry or a discard does.
CREATE INDEX jfast_jobs_dead_payload_idx ON jfast_jobs USING gin ((payload::jsonb) jsonb_path_ops) WHERE state = 'dead';
