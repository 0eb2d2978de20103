import type { Job } from "../job.js";
import type { LimitMap } from "../limits.js";

/**
 * The queue's limited tasks as a backend keeps them after `setLimits` (docs/tasks.md#limits): a limited task's job
 * is never handed over in process, since only the claim may start it within its limits.
 */
export class LimitedTasks {
  private names: readonly string[] = [];
  private set: ReadonlySet<string> = new Set();

  declare(limits: LimitMap): void {
    this.names = [...limits.keys()];
    this.set = new Set(this.names);
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
