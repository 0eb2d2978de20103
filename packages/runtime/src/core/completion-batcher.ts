/**
 * Coalesces a backend's completions into one write per round trip (the PostgreSQL queue's UPDATE, the Redis
 * queue's complete.lua). The first completion is written at once (no added latency when the queue is quiet);
 * completions that arrive while a write is in flight wait for it and go together in the next one. Under
 * load — many short jobs at high concurrency — that turns N round trips into a few, without a timer. A batch
 * is written per worker id (one process usually runs one worker), so a write takes ids of one worker only.
 * A failed write rejects every completion in it; `write` must settle each id as a write of that id alone
 * would (only its current owner settles it), so batching changes round trips, never outcomes.
 */
export class CompletionBatcher {
  private pending: Array<{ id: string; workerId: string; resolve: () => void; reject: (error: unknown) => void }> = [];
  private draining: Promise<void> | null = null;

  constructor(
    private readonly write: (ids: string[], workerId: string) => Promise<void>,
    private readonly maxBatch = 1000,
  ) {}

  add(id: string, workerId: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ id, workerId, resolve, reject });
      this.kick();
    });
  }

  /**
   * Starts a drain unless one runs. A completion can be added after a drain saw nothing pending but before it
   * ended (other microtasks run in between), so the end of a drain looks again and starts the next one.
   */
  private kick(): void {
    if (this.draining) return;
    this.draining = this.drain().finally(() => {
      this.draining = null;
      if (this.pending.length > 0) this.kick();
    });
  }

  /** Resolves once everything added so far is written (or failed). */
  async flush(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const taken = this.pending.splice(0, this.maxBatch);
      const byWorker = new Map<string, typeof taken>();
      for (const entry of taken) {
        const group = byWorker.get(entry.workerId);
        if (group) group.push(entry);
        else byWorker.set(entry.workerId, [entry]);
      }
      await Promise.all(
        [...byWorker].map(async ([workerId, batch]) => {
          try {
            await this.write(
              batch.map((b) => b.id),
              workerId,
            );
            for (const b of batch) b.resolve();
          } catch (error) {
            for (const b of batch) b.reject(error);
          }
        }),
      );
    }
  }
}
