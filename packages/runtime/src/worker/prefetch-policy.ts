/** An adaptive buffer holds about this much work: enough to cover a claim's round trip many times over. */
export const PREFETCH_HORIZON_MS = 100;
/** ...and never more jobs than this, however short they are. */
export const PREFETCH_MAX = 1000;
/** The finishing rate is sampled over windows at least this long. */
const RATE_WINDOW_MS = 20;

/**
 * How many jobs a worker's buffer should hold beyond the running ones (WorkerOptions.prefetch): a fixed number,
 * else about PREFETCH_HORIZON_MS of work at the rate jobs finish, never more than PREFETCH_MAX nor (except for a
 * broker that pushes ahead) fewer than `concurrency`. For a broker that pushes ahead there is no floor: jobs it
 * holds unacked for a busy worker count against its consumer_timeout, so with slow jobs it pushes none ahead.
 */
export function prefetchTarget(params: { fixed: number | undefined; concurrency: number; pushesAhead: boolean; jobsPerMs: number }): number {
  if (params.fixed !== undefined) return Math.max(0, params.fixed);
  const floor = params.pushesAhead ? 0 : params.concurrency;
  return Math.min(PREFETCH_MAX, Math.max(floor, Math.ceil(params.jobsPerMs * PREFETCH_HORIZON_MS)));
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
