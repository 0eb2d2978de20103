/**
 * The most jobs one worker runs at once, from [plugin.queue] concurrency, `--concurrency` or createWorker alike.
 * Each slot holds a lease, a heartbeat entry and the job's memory; past this, a typo is likelier than intent.
 */
export const MAX_CONCURRENCY = 1000;
