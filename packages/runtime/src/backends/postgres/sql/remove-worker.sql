-- A worker's clean shutdown: its registry row goes (docs/worker.md#the-worker-registry).
-- params: $1 queue, $2 id
-- result: none
-- index:  jfast_workers_pkey
DELETE FROM jfast_workers WHERE queue = $1 AND id = $2
