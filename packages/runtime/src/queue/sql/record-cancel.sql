-- Records a cancellation for a queue that cannot apply it where the job waits (RabbitMQ).
-- params: $1 queue, $2 job id
-- result: one row { seq } when recorded now, none when it was recorded before
-- index:  jfast_cancelled_jobs_pkey (ON CONFLICT)
INSERT INTO jfast_cancelled_jobs (queue, id)
VALUES ($1, $2)
ON CONFLICT (queue, id) DO NOTHING
RETURNING seq
