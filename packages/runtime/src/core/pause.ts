/**
 * Pausing a task: its jobs stay queued, no worker in any process starts one, and they run again after it is
 * resumed. Attempts are never spent by a pause. Where the state lives (so every process sees it):
 *  - the Redis queue keeps it in its own keys (its claim parks a paused task's jobs aside and resume puts them
 *    back), see backends/redis;
 *  - with the database plugin, the jfast_paused_tasks table (migration 0010), whatever the queue backend;
 *  - the memory queue, in memory (one process anyway).
 * Workers read it through PausedTasks (queue/paused-tasks.ts), refreshed every second.
 */
export interface PausedTask {
  task: string;
  /** ISO-8601. */
  pausedAt: string;
  /** Who paused it (the admin token's name), when known. */
  pausedBy: string | null;
}

export interface PauseStore {
  readonly kind: "sql" | "redis" | "memory";
  list(): Promise<PausedTask[]>;
  /** Idempotent: pausing a paused task keeps its first pausedAt and pausedBy and returns them. */
  pause(params: { task: string; by: string | null }): Promise<PausedTask>;
  /** False when the task was not paused. */
  resume(params: { task: string }): Promise<boolean>;
}

/** What a worker reads before each claim: the paused tasks as last refreshed from the store. */
export interface PausedTaskSet {
  readonly size: number;
  has(task: string): boolean;
  names(): readonly string[];
  /** Called when a task is resumed, so idle workers claim at once; returns the unsubscribe function. */
  onResume(listener: () => void): () => void;
}
