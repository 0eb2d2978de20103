/** An adaptive buffer holds about this much work: enough to cover a claim's round trip many times over. */
export const PREFETCH_HORIZON_MS = 100;
/** ...and never more jobs than this, however short they are. */
export const PREFETCH_MAX = 1000;
/**
 * ...and with a fair task on the queue, never more than this: a key's new jobs start behind whatever the buffer
 * holds, so a long one would let a key with a backlog run ahead of a new key (docs/flow-control.md#fair-share-across-keys).
 * About this many plus `concurrency` of a backlog's jobs can start ahead of a new key's (BENCHMARKS.md, fair share).
 */
export const PREFETCH_FAIR_MAX = 50;
/** The finishing rate is sampled over windows at least this long. */
const RATE_WINDOW_MS = 20;

/**
 * How many jobs a worker's buffer should hold beyond the running ones (WorkerOptions.prefetch): a fixed number,
 * else about PREFETCH_HORIZON_MS of work at the rate jobs finish, never more than PREFETCH_MAX (PREFETCH_FAIR_MAX with
 * `fair`: a queue with a fair task) nor (except for a
 * broker that pushes ahead) fewer than `concurrency`. For a broker that pushes ahead there is no floor: jobs it
 * holds unacked for a busy worker count against its consumer_timeout, so with slow jobs it pushes none ahead.
 */
export function prefetchTarget(params: { fixed: number | undefined; concurrency: number; pushesAhead: boolean; jobsPerMs: number; fair?: boolean }): number {
  if (params.fixed !== undefined) return Math.max(0, params.fixed);
  const floor = params.pushesAhead ? 0 : params.concurrency;
  return Math.min(params.fair ? PREFETCH_FAIR_MAX : PREFETCH_MAX, Math.max(floor, Math.ceil(params.jobsPerMs * PREFETCH_HORIZON_MS)));
}

/** Jobs finished per ms, sampled over windows of at least RATE_WINDOW_MS. */
export class FinishRate {
  private rate = 0;
  private sampledAt = performance.now();
  private sampledCount = 0;

  /** The rate as of `finished` jobs in all; a new sample once the window has passed. */
  read(finished: number): number {
    const now = performance.now();
    const elapsed = now - this.sampledAt;
    if (elapsed >= RATE_WINDOW_MS) {
      this.rate = (finished - this.sampledCount) / elapsed;
      this.sampledAt = now;
      this.sampledCount = finished;
    }
    return this.rate;
  }
}
