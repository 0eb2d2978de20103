-- Whether the migrations have run in the schema this connection resolves to.
-- params: none
-- result: one row { jobs: regclass or null, counters: regclass or null }
-- index:  none (catalog lookup)
SELECT to_regclass('jfast_jobs') AS jobs, to_regclass('jfast_queue_counters') AS counters
