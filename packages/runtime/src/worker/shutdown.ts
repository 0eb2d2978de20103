import type { Job } from "../core/job.js";
import type { JobEvents } from "../core/job-events.js";
import type { QueueBackend } from "../core/queue-backend.js";
import type { Logger } from "../observability/logger.js";
import { createDeferred, type Deferred } from "./deferred.js";
import type { Heartbeat } from "./heartbeat.js";
import type { WorkerPresence } from "./presence.js";
import type { OutcomeWriter } from "./outcome-writer.js";
import type { Slots } from "./slots.js";

/** What shutdown needs of a worker (worker.ts). */
export interface StoppingWorker {
  readonly id: string;
  stopping: boolean;
  readonly loop: Promise<void> | null;
  readonly loopAbort: AbortController;
  readonly stopNowSignal: Deferred;
  allFinished: Deferred | null;
  readonly unsubscribeResume: (() => void) | null;
  readonly slots: Slots;
  readonly writer: OutcomeWriter;
  readonly heartbeat: Heartbeat;
  readonly presence: WorkerPresence | null;
  wakeLoop(): void;
}

class ShutdownAbort extends Error {
  constructor() {
    super("the worker is shutting down; the job was released back to the queue");
    this.name = "ShutdownAbort";
  }
}

/**
 * Graceful stop (docs/worker.md#shutdown): claim nothing more, give the buffer back at once, let running jobs finish
 * for `graceMs` (or until stopNow), then abort the rest and release them without spending an attempt; outcomes
 * already handed over are written before the backend may close.
 */
export async function shutdownWorker(
  worker: StoppingWorker,
  options: { backend: QueueBackend; logger: Logger; events?: JobEvents | undefined; queue?: string | undefined },
  graceMs: number,
): Promise<void> {
  const { backend, logger } = options;
  const released = (jobs: readonly Job[], started: boolean) => {
    const { events } = options;
    if (!events?.has("job:released")) return;
    for (const job of jobs) events.emit("job:released", { job, queue: options.queue ?? "default", workerId: worker.id, started });
  };
  const { slots } = worker;
  worker.stopping = true;
  worker.writer.graceEndsAt = Date.now() + graceMs;
  worker.unsubscribeResume?.();
  worker.loopAbort.abort();
  worker.wakeLoop();
  await worker.loop;
  // A job handed over in process while stop() began lands in the buffer: wait for those writes first.
  await slots.noReservations();
  const buffered = slots.buffer.splice(0);
  if (buffered.length > 0) {
    // Claimed ahead but never started: back at once.
    await backend.release({ workerId: worker.id, jobs: buffered }).then(
      () => released(buffered, false),
      (error: unknown) => logger.error("could not release prefetched jobs; they return when their lease expires", { error }),
    );
  }
  if (slots.running.size > 0) {
    worker.allFinished = createDeferred();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([worker.allFinished.promise, grace, worker.stopNowSignal.promise]);
    clearTimeout(timer);
  }
  const leftovers = [...slots.running.values()];
  if (leftovers.length > 0) {
    for (const r of leftovers) {
      r.cancelled = true;
      r.cancellation.abort(new ShutdownAbort());
    }
    const jobs: Job[] = leftovers.map((r) => r.job);
    try {
      await backend.release({ workerId: worker.id, jobs });
      logger.warn("released running jobs at shutdown", { released: jobs.map((j) => j.id) });
      released(jobs, true);
    } catch (error) {
      // Not lost: their leases expire and another worker picks them up.
      logger.error("could not release running jobs at shutdown; they return when their lease expires", { error });
    }
  }
  await worker.writer.flush();
  worker.heartbeat.stop();
  // Last: until here it still runs (or releases) jobs, and the registry says so.
  await worker.presence?.stop();
}
