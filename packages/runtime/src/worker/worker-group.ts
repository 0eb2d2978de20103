import type { Job } from "../core/job.js";
import type { Worker } from "./worker.js";

/**
 * What `jfast.createWorker()` returns: one Worker, or several run as one (one per named queue, each with its
 * own slots, so a saturated queue never takes another's; docs/queues.md#workers).
 */
export interface AppWorker {
  readonly id: string;
  /** Jobs running now, in every queue this worker runs. */
  readonly activeJobs: readonly Job[];
  readonly processedCount: number;
  /** The named queues it runs. */
  readonly queues: readonly string[];
  start(): void;
  stop(params: { graceMs: number }): Promise<void>;
  stopNow(): void;
}

/** Several queues' workers as one: started, stopped and counted together; shutdown gives each the same grace. */
export function groupWorkers(params: { id: string; workers: ReadonlyMap<string, Worker> }): AppWorker {
  const workers = [...params.workers.values()];
  return {
    id: params.id,
    queues: [...params.workers.keys()],
    get activeJobs() {
      return workers.flatMap((w) => w.activeJobs);
    },
    get processedCount() {
      return workers.reduce((sum, w) => sum + w.processedCount, 0);
    },
    start: () => workers.forEach((w) => w.start()),
    stop: async (stop) => {
      await Promise.all(workers.map((w) => w.stop(stop)));
    },
    stopNow: () => workers.forEach((w) => w.stopNow()),
  };
}
