-- A job cancelled by id (cancel) that is a flow step of a broker queue: the step is cancelled too, so it is never
-- made ready nor published, and getJob shows it cancelled. A finished step, or a job that is no step, is untouched.
-- params: $1 job id
-- result: none
-- index:  jfast_flow_steps_pkey
UPDATE jfast_flow_steps SET state = 'cancelled', finished_at = now(), publish_after = NULL
WHERE job_id = $1 AND state IN ('waiting', 'ready')
