/**
 * Jobs that finish without waiting on I/O (a cached lookup, a no-op) start the next buffered job from the
 * previous one's promise chain, so a buffer of hundreds would run in one turn of the event loop: nothing else
 * runs until it is empty — not the claim of the next batch (node-postgres sends a statement from
 * process.nextTick, after the chain), not the answers of claims and completions, not heartbeats or the
 * service's own requests. After this long in one turn the next job starts in the following turn instead.
 */
export const JOB_CHAIN_TURN_MS = 1;

/** Starts buffered jobs as slots free, in this turn of the event loop or, past JOB_CHAIN_TURN_MS, the next. */
export class ChainTurns {
  /** When the current run of jobs started back to back began (performance.now()), -1 between turns. */
  private startedAt = -1;
  /** A job finished after JOB_CHAIN_TURN_MS: the next ones start in the following turn. */
  private deferred = false;

  constructor(private readonly fill: () => void) {}

  /** True while this turn has run jobs long enough: filling waits for the next turn. */
  get yielded(): boolean {
    return this.deferred;
  }

  /** fill, or in the next turn of the event loop if this one has started jobs for JOB_CHAIN_TURN_MS. */
  fillInTurn(): void {
    if (this.startedAt < 0) {
      this.startedAt = performance.now();
      // Runs after this turn's microtasks and process.nextTick callbacks (a claim node-postgres is sending).
      setImmediate(this.endTurn);
    } else if (this.deferred || performance.now() - this.startedAt >= JOB_CHAIN_TURN_MS) {
      this.deferred = true;
      return;
    }
    this.fill();
  }

  private readonly endTurn = (): void => {
    this.startedAt = -1;
    if (!this.deferred) return;
    this.deferred = false;
    this.fill();
  };
}
