-- Rewrites one job's payload and errors if it is still waiting or dead and unchanged since it was read (a claim
-- or a retry in between leaves it as it is).
-- params: $1 queue, $2 id, $3 payload read (text), $4 errors read (text), $5 new payload (json text),
--         $6 new errors (jsonb text)
-- result: one row { id } when rewritten, else none
-- index:  jfast_jobs_pkey
UPDATE jfast_jobs
SET payload = $5::json, errors = $6::jsonb
WHERE id = $2 AND queue = $1 AND state IN ('waiting', 'ready', 'dead') AND payload::text = $3 AND errors = $4::jsonb
RETURNING id
