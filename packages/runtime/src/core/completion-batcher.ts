import type { StoredResult } from "./result.js";
import type { AttemptRun } from "./job-life.js";

/**
 * Coalesces a backend's completions into one write per round trip (the PostgreSQL queue's UPDATE, the Redis
 * queue's complete.lua). The first completion is written at once (no added latency when the queue is quiet);
 * completions that arrive while a write is in flight wait for it and go together in the next one. Under
 * load — many short jobs at high concurrency — that turns N round trips into a few, without a timer. A batch
 * is written per worker id (one process usually runs one worker), so a write takes ids of one worker only.
 * A failed write rejects every completion in it; `write` must settle each id as a write of that id alone
 * would (only its current owner settles it), so batching changes round trips, never outcomes.
 * A completion may carry the job's result (core/result.ts); `results` is then given beside `ids`, index for index,
 * and only then: a batch without results is written exactly as before results existed. Each attempt's record
 * (core/job-life.ts) rides the same way in `runs`.
 */
export class CompletionBatcher {
  /** Completions not yet being written, a batch per worker id (at most maxBatch ids each, oldest first). */
  private pending: Batch[] = [];
  private draining: Promise<void> | null = null;

  constructor(
    private readonly write: (ids: string[], workerId: string, results?: Array<StoredResult | undefined>, runs?: Array<AttemptRun | undefined>) => Promise<void>,
    private readonly maxBatch = 1000,
  ) {}

  /** Settles when the batch holding `id` is written; every completion of a batch shares its promise. */
  add(id: string, workerId: string, result?: StoredResult, run?: AttemptRun): Promise<void> {
    let batch: Batch | undefined;
    for (let i = this.pending.length - 1; i >= 0; i--) {
      const candidate = this.pending[i]!;
      if (candidate.workerId === workerId) {
        if (candidate.ids.length < this.maxBatch) batch = candidate;
        break;
      }
    }
    if (!batch) {
      batch = newBatch(workerId);
      this.pending.push(batch);
    }
    if (result !== undefined && !batch.results) batch.results = batch.ids.map(() => undefined);
    batch.results?.push(result);
    if (run !== undefined && !batch.runs) batch.runs = batch.ids.map(() => undefined);
    batch.runs?.push(run);
    batch.ids.push(id);
    this.kick();
    return batch.done;
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
      // One write per worker id at a time, up to maxBatch ids in all.
      const taken: Batch[] = [];
      const workers = new Set<string>();
      let size = 0;
      for (let i = 0; i < this.pending.length && size < this.maxBatch; ) {
        const batch = this.pending[i]!;
        if (workers.has(batch.workerId)) {
          i++;
          continue;
        }
        workers.add(batch.workerId);
        taken.push(batch);
        size += batch.ids.length;
        this.pending.splice(i, 1);
      }
      await Promise.all(
        taken.map(async (batch) => {
          try {
            await (batch.runs
              ? this.write(batch.ids, batch.workerId, batch.results, batch.runs)
              : batch.results
                ? this.write(batch.ids, batch.workerId, batch.results)
                : this.write(batch.ids, batch.workerId));
            batch.resolve();
          } catch (error) {
            batch.reject(error);
          }
        }),
      );
    }
  }
}

interface Batch {
  workerId: string;
  ids: string[];
  /** Created by the first completion with a result; undefined where a job has none. */
  results?: Array<StoredResult | undefined>;
  /** Created by the first completion with an attempt's record. */
  runs?: Array<AttemptRun | undefined>;
  done: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

function newBatch(workerId: string): Batch {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const done = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A batch nobody awaits any more (its callers gone) must not report an unhandled rejection of its own.
  done.catch(() => undefined);
  return { workerId, ids: [], done, resolve, reject };
}
