-- A payload PostgreSQL keeps as json but cannot read as jsonb (a string with \u0000, or half of a surrogate
-- pair, in a row written before enqueue refused them or by hand) made the dead-payload index fail on that row's
-- death: the death, and every claim that reached the row with its lease expired, failed, and the queue stopped.
-- The index now reads the payload through a function that gives NULL for such a payload instead of failing, so a
-- job always dies; its payload is then simply not found by a payload search. The search (search-dead.sql)
-- writes the same expression. Only the data exceptions of the cast are caught (class 22), nothing else.
CREATE FUNCTION jfast_payload_jsonb(payload json) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
BEGIN
  RETURN payload::jsonb;
EXCEPTION WHEN data_exception THEN
  RETURN NULL;
END
$$;

DROP INDEX jfast_jobs_dead_payload_idx;
CREATE INDEX jfast_jobs_dead_payload_idx ON jfast_jobs USING gin (jfast_payload_jsonb(payload) jsonb_path_ops) WHERE phase = 'dead';
