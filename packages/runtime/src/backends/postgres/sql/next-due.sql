-- How long an idle worker may sleep: until the earliest ready job becomes due or the earliest lease
-- expires (a vanished worker's job to reclaim). Both are read from the open index: the first ready entry in
-- its order, and the running jobs among the due ones (a running job became due before it was claimed).
-- A paused task's jobs ($2) do not count: they would wake an idle worker that may not claim them.
-- params: $1 queue, $2 paused tasks text[] (empty: none)
-- result: one row { due_in_ms: double precision, negative when due already; null when nothing waits }
-- index:  jfast_jobs_open_idx
SELECT EXTRACT(EPOCH FROM (
         LEAST(
           (SELECT min(available_at) FROM jfast_jobs WHERE queue = $1 AND phase = 'open' AND state = 'ready' AND task <> ALL($2::text[])),
           (SELECT min(locked_until) FROM jfast_jobs
            WHERE queue = $1 AND phase = 'open' AND available_at <= now() AND state = 'running' AND task <> ALL($2::text[]))
         ) - now()
       )) * 1000 AS due_in_ms
