/**
 * Jobs processed (completed), failed (an attempt that threw or timed out, retried or not) and dead (dead-lettered)
 * per minute and task, as the workers of every process report them (queue/throughput-recorder.ts). Kept 7 days.
 * Where: the database when the plugin is on (jfast_throughput, migration 0011), else the Redis queue's own keys
 * (a hash per minute with a TTL), else memory.
 */
export interface ThroughputCounts {
  processed: number;
  failed: number;
  dead: number;
}

export interface ThroughputRow extends ThroughputCounts {
  /** Epoch ms of the start of the minute (UTC). */
  minute: number;
  task: string;
}

export interface ThroughputStore {
  readonly kind: "sql" | "redis" | "memory";
  /** Adds counts to what is stored for each minute and task. */
  add(rows: ThroughputRow[]): Promise<void>;
  /** Minutes from `from` (epoch ms, inclusive) that have counts, summed over tasks or of one task. */
  read(params: { from: number; task?: string | undefined }): Promise<Array<ThroughputCounts & { minute: number }>>;
  /** Forgets minutes before `before` (epoch ms); a store with expiring keys does nothing. */
  prune(params: { before: number }): Promise<void>;
}

export const THROUGHPUT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
export const MINUTE_MS = 60_000;
