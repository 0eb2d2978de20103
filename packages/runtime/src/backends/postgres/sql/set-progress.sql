-- tools.progress (docs/jobs.md#progress): the running job's progress, only while this worker still runs it, so a
-- write arriving after the attempt's outcome changes nothing. At most about once a second per job, and only for
-- handlers that report progress. A HOT update: no indexed column changes.
-- params: $1 job id, $2 worker id, $3 progress (jsonb)
-- result: none
-- index:  jfast_jobs_pkey
UPDATE jfast_jobs SET progress = $3::jsonb
WHERE id = $1 AND locked_by = $2 AND state = 'running'
