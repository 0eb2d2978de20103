-- Jobs processed, failed and dead-lettered per minute and task, for the admin API's throughput history. Each
-- process's workers count in memory and add their counts here every few seconds (one upsert per minute and
-- task), so a busy queue costs a handful of rows per flush, not a row per job. Rows older than 7 days are
-- pruned by the processes that write them.
CREATE TABLE jfast_throughput (
  queue     text NOT NULL,
  minute    timestamptz NOT NULL,
  task      text NOT NULL,
  processed bigint NOT NULL DEFAULT 0,
  failed    bigint NOT NULL DEFAULT 0,
  dead      bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (queue, minute, task)
);
