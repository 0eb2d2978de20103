-- How long an idle worker may sleep: until the earliest ready job becomes due or the earliest lease
-- expires (a vanished worker's job to reclaim). Both are read from the open index, once per priority (its second
-- key): the first ready entry of each priority, and the running jobs among the due ones (a running job became
-- due before it was claimed).
-- A paused task's jobs ($2) do not count: they would wake an idle worker that may not claim them.
-- params: $1 queue, $2 paused tasks text[] (empty: none)
-- result: one row { due_in_ms: double precision, negative when due already; null when nothing waits }
-- index:  jfast_jobs_open_idx
SELECT EXTRACT(EPOCH FROM (
         LEAST(
           (SELECT min(first.available_at) FROM unnest('{0,1,2,3,4,5,6,7,8,9}'::smallint[]) AS p(priority)
            CROSS JOIN LATERAL (SELECT available_at FROM jfast_jobs
                                WHERE queue = $1 AND phase = 'open' AND priority = p.priority AND state = 'ready' AND task <> ALL($2::text[])
                                ORDER BY available_at LIMIT 1) AS first),
           (SELECT min(lease.until) FROM unnest('{0,1,2,3,4,5,6,7,8,9}'::smallint[]) AS p(priority)
            CROSS JOIN LATERAL (SELECT min(locked_until) AS until FROM jfast_jobs
                                WHERE queue = $1 AND phase = 'open' AND priority = p.priority AND available_at <= now()
                                  AND state = 'running' AND task <> ALL($2::text[])) AS lease)
         ) - now()
       )) * 1000 AS due_in_ms
