import type { Job } from "../job.js";
import { countsAtClaim, isFairAlone, isKeyed, type LimitMap } from "../limits.js";

/**
 * The queue's limited tasks as a backend keeps them after `setLimits` (docs/tasks.md#limits): a limited task's job
 * is never handed over in process, since only the claim may start it within its limits.
 */
export class LimitedTasks {
  private names: readonly string[] = [];
  private set: ReadonlySet<string> = new Set();
  private perKey: readonly string[] = [];
  private fairSet: ReadonlySet<string> = new Set();
  private fairAlone: readonly string[] = [];
  private uncounted: readonly string[] = [];
  private blocking: readonly string[] = [];

  declare(limits: LimitMap): void {
    this.names = [...limits.keys()];
    this.set = new Set(this.names);
    this.perKey = this.names.filter((task) => isKeyed(limits.get(task)!));
    this.fairSet = new Set(this.names.filter((task) => limits.get(task)!.fair !== undefined));
    this.fairAlone = this.names.filter((task) => isFairAlone(limits.get(task)!));
    this.uncounted = this.names.filter((task) => !countsAtClaim(limits.get(task)!));
    this.blocking = this.names.filter((task) => limits.get(task)!.ordered?.onDead === "block");
  }

  /** The tasks whose jobs carry a key the claim walks: per-key concurrency or fairness (docs/flow-control.md). */
  get keyed(): readonly string[] {
    return this.perKey;
  }

  /** The tasks with `orderedBy` whose dead jobs block their key (docs/flow-control.md#order-per-key). */
  get blockingOnDead(): readonly string[] {
    return this.blocking;
  }

  /** The tasks with fair share across keys (docs/flow-control.md#fair-share-across-keys). */
  get fair(): ReadonlySet<string> {
    return this.fairSet;
  }

  /**
   * The fair tasks with no other per-key limit (no per-key concurrency, order or per-key rate limit): their claim
   * reads their keys in turn order, at the cost of the batch it claims.
   */
  get fairOnly(): readonly string[] {
    return this.fairAlone;
  }

  /**
   * The fair tasks with nothing else limited, whose starts the claim counts nothing of: their jobs are claimed for
   * the worker's buffer too, not only its free slots (countsAtClaim).
   */
  get fairUncounted(): readonly string[] {
    return this.uncounted;
  }

  /** True when a task's jobs are claimed only for the worker's free slots (countsAtClaim). */
  counted(task: string): boolean {
    return this.set.has(task) && !this.uncounted.includes(task);
  }

  get tasks(): readonly string[] {
    return this.names;
  }

  get size(): number {
    return this.names.length;
  }

  /** True when a job of the batch belongs to a limited task. */
  any(jobs: readonly Job[]): boolean {
    if (this.set.size === 0) return false;
    for (let i = 0; i < jobs.length; i++) if (this.set.has(jobs[i]!.task)) return true;
    return false;
  }
}
