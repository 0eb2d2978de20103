-- Serialises claims of one schedule until the transaction ends, so "no claim at or after this tick" stays
-- true between the check and the insert even for two replicas claiming different ticks (skewed clocks).
-- params: $1 schedule name
-- result: one row, ignored
-- index:  none (an advisory lock keyed by the name's 64-bit hash)
SELECT pg_advisory_xact_lock(hashtextextended('jfast.schedule:' || $1::text, 0))
