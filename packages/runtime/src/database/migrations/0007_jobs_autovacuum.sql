-- Vacuum jfast_jobs by the amount of churn, not by its size. Every claim and completion leaves an old row
-- version whose entry stays in the partial indexes until it is cleaned up; with the default scale factor
-- (20 % of the table) a table holding a million finished rows would gather 200 000 of them before autovacuum
-- starts, and claims would wade through them meanwhile. Index scans also mark such entries dead as they
-- pass them, but only once no open snapshot can still see the old version. Pages of finished rows become
-- all-visible and are skipped by these frequent vacuums, so they stay cheap.
ALTER TABLE jfast_jobs SET (
  autovacuum_vacuum_scale_factor = 0,
  autovacuum_vacuum_threshold = 5000,
  autovacuum_analyze_scale_factor = 0.05
);
