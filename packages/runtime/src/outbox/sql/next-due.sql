-- When the next pending row comes due (a retry backing off, a claim whose lease runs out), so the relay
-- sleeps exactly until then when that is sooner than its poll interval.
-- params: none
-- result: one row { due_in_ms: milliseconds from now, null when nothing is pending }
-- index:  jfast_outbox_pending_idx (first entry in available_at order)
SELECT (extract(epoch FROM (min(available_at) - now())) * 1000)::double precision AS due_in_ms
FROM jfast_outbox
WHERE state = 'pending'
