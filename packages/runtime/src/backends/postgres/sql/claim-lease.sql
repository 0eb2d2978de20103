-- Takes the lease $1 for owner $2 for $3 ms, unless another owner holds it unexpired (one pruner at a time per
-- queue, docs/queues.md#retention). The upsert locks the row, so of two concurrent claims the second re-reads
-- it after the first commits and finds it held. Times are the database's: the processes' clocks never matter.
-- params: $1 lease name, $2 owner, $3 duration (ms)
-- result: one row { owner } when this call holds the lease now, none otherwise
-- index:  jfast_leases_pkey (name)
INSERT INTO jfast_leases AS l (name, owner, expires_at)
VALUES ($1, $2, clock_timestamp() + $3::double precision * interval '1 millisecond')
ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
  WHERE l.expires_at <= clock_timestamp() OR l.owner = EXCLUDED.owner
RETURNING owner
