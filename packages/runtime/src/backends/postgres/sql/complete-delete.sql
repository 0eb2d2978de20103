-- Completes a batch of one worker's claims by deleting their rows ([plugin.queue] keep_completed = false).
-- A delete only marks the row version dead: no new version is written and no index entry added, which is
-- most of what complete.sql costs. The job is then forgotten: getJob finds nothing and enqueueing its id
-- again makes a new job. A job whose lease was taken over by another worker is left to its new owner.
-- params: $1 job ids text[], $2 worker id
-- result: none
-- index:  jfast_jobs_pkey (id = ANY)
DELETE FROM jfast_jobs
WHERE id = ANY($1::text[]) AND locked_by = $2 AND state = 'running'
