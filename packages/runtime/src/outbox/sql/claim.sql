-- Takes up to $1 due rows for one relay. SKIP LOCKED: relays in other processes claiming at the same moment
-- get other rows, never the same one. The claim commits at once (no transaction stays open while the relay
-- talks to the queue or the broker): the row is leased by pushing available_at out by $2 ms and naming the
-- relay in claimed_by, and the attempt is counted now, so an attempt whose relay vanishes is not free.
-- previous_claim is set when the last claim was never settled (its relay stopped mid-send).
-- params: $1 batch size (integer), $2 lease in ms (double precision), $3 relay id (text)
-- result: the claimed rows { id, seq, kind, destination, body (text), attempts, max_attempts, created_at, previous_claim }
-- index:  jfast_outbox_pending_idx (state = 'pending', ordered by available_at, seq)
WITH due AS (
  SELECT id, claimed_by
  FROM jfast_outbox
  WHERE state = 'pending' AND available_at <= now()
  ORDER BY available_at, seq
  LIMIT $1
  FOR UPDATE SKIP LOCKED
)
UPDATE jfast_outbox AS o
SET attempts = o.attempts + 1,
    available_at = now() + $2::double precision * interval '1 millisecond',
    claimed_by = $3
FROM due
WHERE o.id = due.id
RETURNING o.id, o.seq, o.kind, o.destination, o.body::text AS body, o.attempts, o.max_attempts, o.created_at,
          due.claimed_by AS previous_claim
