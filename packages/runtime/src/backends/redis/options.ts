export interface RedisBackendOptions {
  /** redis://[user:password@]host:port[/db] (rediss:// for TLS); with `cluster`, one or more seed nodes, comma-separated. */
  url: string;
  /** Connect through the Redis Cluster client (every key of the queue is in one slot: its hash tag). */
  cluster?: boolean;
  /**
   * Replicas that must acknowledge an enqueue and a completion before it returns (WAIT): what a primary lost
   * right after acknowledging may otherwise take with it (docs/redis.md#wait-replicas). 0 (default): no wait.
   */
  waitReplicas?: number;
  /** How long WAIT may take before the write fails as BACKEND_NOT_REPLICATED; default 1 s. */
  waitTimeoutMs?: number;
  /** The queue name; it becomes the hash tag `{<queue>}` every key of the queue carries. */
  queue: string;
  /** Put in front of every key, outside the hash tag (several apps sharing one Redis). */
  prefix?: string;
  /**
   * How long a worker's heartbeat key lives without a refresh. Past it the worker counts as gone and any live
   * worker returns the jobs in its processing list. Refreshed every third of this; default 30 s.
   */
  workerTtlMs?: number;
  /** How long a completed job is kept (job detail, and enqueue of its id stays a no-op); default 24 h; 0 keeps none. */
  completedRetentionMs?: number;
  /**
   * How long a cancelled job's hash lives at most (its own expiry; the pruner may delete it sooner); default as long as
   * a completed one; 0: until the pruner deletes it. Never less than an hour (see cancel()).
   */
  cancelledRetentionMs?: number;
  /** How long setup() waits for Redis to answer before start-up fails (rides out a restart); default 10 s. */
  startupWaitMs?: number;
  logger?: { warn(message: string, fields?: Record<string, unknown>): void };
}
