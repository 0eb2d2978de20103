/**
 * Coalesces completions into one UPDATE per round trip. The first completion is written at once (no
 * added latency when the queue is quiet); completions that arrive while a write is in flight wait for it
 * and go together in the next one. Under load — many short jobs at high concurrency — that turns N
 * round trips into a few, without a timer.
 */
export class CompletionBatcher {
  private pending: Array<{ id: string; workerId: string; resolve: () => void; reject: (error: unknown) => void }> = [];
  private draining: Promise<void> | null = null;

  constructor(
    private readonly write: (ids: string[], workerIds: string[]) => Promise<void>,
    private readonly maxBatch = 500,
  ) {}

  add(id: string, workerId: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ id, workerId, resolve, reject });
      this.draining ??= this.drain().finally(() => (this.draining = null));
    });
  }

  /** Resolves once everything added so far is written (or failed). */
  async flush(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.maxBatch);
      try {
        await this.write(
          batch.map((b) => b.id),
          batch.map((b) => b.workerId),
        );
        for (const b of batch) b.resolve();
      } catch (error) {
        for (const b of batch) b.reject(error);
      }
    }
  }
}
