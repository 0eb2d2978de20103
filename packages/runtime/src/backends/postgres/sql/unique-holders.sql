-- The jobs holding state-held unique keys: read after enqueue-unique.sql for the keys whose row it skipped.
-- params: $1 queue, $2 scoped keys text[]
-- result: one row { key, id } per key held now (a key whose holder finished meanwhile is absent)
-- index:  jfast_jobs_unique_idx (its predicate repeated, so the planner can use it)
SELECT unique_key AS key, id
FROM jfast_jobs
WHERE queue = $1 AND unique_key = ANY ($2::text[]) AND unique_phases IS NOT NULL AND phase = ANY (unique_phases)
