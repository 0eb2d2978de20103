-- Deletes minutes older than the retention period.
-- params: $1 queue, $2 cutoff (timestamptz)
-- result: none
-- index:  jfast_throughput_pkey (queue, minute, ...)
DELETE FROM jfast_throughput WHERE queue = $1 AND minute < $2::timestamptz
