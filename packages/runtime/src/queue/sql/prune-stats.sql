-- Deletes minutes older than a day and hours older than 7 days.
-- params: $1 queue, $2 minute cutoff (timestamptz), $3 hour cutoff (timestamptz)
-- result: none
-- index:  jfast_stats_pkey (queue, span, at, ...)
DELETE FROM jfast_stats
WHERE queue = $1 AND ((span = 1 AND at < $2::timestamptz) OR (span = 60 AND at < $3::timestamptz))
