-- Gives the lease $1 back, if owner $2 still holds it, so the next claim need not wait for it to expire.
-- params: $1 lease name, $2 owner
-- result: none
-- index:  jfast_leases_pkey (name)
UPDATE jfast_leases SET expires_at = clock_timestamp() WHERE name = $1 AND owner = $2
