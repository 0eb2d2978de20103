-- Claims and heartbeats become HOT updates (heap-only tuples): the new version of the row is written on the
-- same page and no index gets a new entry. PostgreSQL can do that only when no indexed column changes value,
-- and a column named in a partial index's predicate counts as indexed. Until now every index of jfast_jobs
-- was partial on `state`, which every claim changes (ready -> running), and the lease index held
-- `locked_until`, which every claim and heartbeat changes: each claim wrote a primary-key entry and a lease
-- entry for the row's new version, and left the old ones for vacuum.
--
-- Now the indexes read `phase`, a column computed from `state` that a claim does not change: 'open' for a
-- ready or running job, else the state itself ('completed', 'dead'). A job is claimed, leased and extended
-- while its phase stays 'open'; it leaves the open index only when it finishes or dies. The claim finds
-- both kinds of claimable rows (ready and due; running with an expired lease) in one scan of the open index,
-- filtering on `state` and `locked_until` as it reads: the rows it passes over are the jobs running now,
-- which are few.
--
-- A HOT update also needs room on the row's page for its new version, which is larger than the row inserted
-- (a claim fills in the worker, the lease's end and the claim time: a 140-byte row becomes a 200-byte one).
-- Fillfactor 40 leaves 60 % of each page free when rows are inserted, so every job's claim fits on its page;
-- the versions a claim or a heartbeat leaves behind are pruned from the page when it next runs short of room,
-- which makes room for the heartbeats that follow. The price is space: a backlog takes 2.5 times the pages it
-- would take packed (pages are reused as finished rows are pruned). docs/postgres.md#table-layout.
DROP INDEX jfast_jobs_ready_idx;
DROP INDEX jfast_jobs_lease_idx;
DROP INDEX jfast_jobs_dead_idx;
DROP INDEX jfast_jobs_dead_payload_idx;

ALTER TABLE jfast_jobs SET (fillfactor = 40);
-- Rewrites the table (a stored generated column), with the fillfactor above.
ALTER TABLE jfast_jobs
  ADD COLUMN phase text NOT NULL
  GENERATED ALWAYS AS (CASE WHEN state IN ('ready', 'running') THEN 'open' ELSE state END) STORED;

-- Claim (ready jobs whose time has come, and running jobs whose lease expired), next due time, depths:
-- in order of availability, then enqueue order.
CREATE INDEX jfast_jobs_open_idx ON jfast_jobs (queue, available_at, seq) WHERE phase = 'open';

-- Dead letters, newest death first; and their payloads for search (see 0012).
CREATE INDEX jfast_jobs_dead_idx ON jfast_jobs (queue, died_at DESC, seq DESC) WHERE phase = 'dead';
CREATE INDEX jfast_jobs_dead_payload_idx ON jfast_jobs USING gin ((payload::jsonb) jsonb_path_ops) WHERE phase = 'dead';
