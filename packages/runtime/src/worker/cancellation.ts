import type { Cancellation } from "../core/task.js";
import type { JobEvents } from "../core/job-events.js";
import type { Logger } from "../observability/logger.js";
import { CANCELLED } from "../core/outcome.js";
import { withJob } from "../context/context.js";
import type { Slots } from "./slots.js";
import type { Job } from "../core/job.js";
import { AttemptLife, type LifeSink } from "./attempt-life.js";

/**
 * How one attempt is cancelled (its timeout passed, the worker shut down past its grace period, or the job was
 * cancelled through the queue). The handler sees it as `signal`. Making an AbortSignal costs more than running a
 * no-op job and most handlers never look at theirs, so the signal is made on first use; one made after the abort
 * is already aborted, with the same reason.
 */
export class AttemptCancellation implements Cancellation {
  private controller: AbortController | null = null;
  private fired = false;
  private reason: unknown = undefined;
  private onAbort: ((reason: unknown) => void) | null = null;
  /** Made when the handler first reports progress or logs a line (attempt-life.ts); null for most attempts. */
  life: AttemptLife | null = null;

  constructor(private readonly sink: LifeSink | null = null) {}

  /** This attempt's progress and log lines, made on first use; null outside a worker (no backend to write to). */
  lifeOf(job: Job): AttemptLife | null {
    if (!this.life && this.sink) this.life = new AttemptLife(this.sink, job);
    return this.life;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.fired) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    if (this.fired) return;
    this.fired = true;
    this.reason = reason;
    this.controller?.abort(reason);
    this.onAbort?.(reason);
  }

  /**
   * Calls `onFulfilled` when `work` resolves or `onRejected` with its error — or with the abort's reason as soon
   * as the attempt is aborted — whichever comes first, once.
   */
  whenSettled(work: Promise<unknown>, onFulfilled: (value: unknown) => void, onRejected: (error: unknown) => void): void {
    if (this.fired) {
      work.catch(() => undefined);
      const reason = this.reason;
      queueMicrotask(() => onRejected(reason));
      return;
    }
    let settled = false;
    this.onAbort = (reason) => {
      if (settled) return;
      settled = true;
      onRejected(reason);
    };
    work.then(
      (value) => {
        if (settled) return;
        settled = true;
        this.onAbort = null;
        onFulfilled(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        this.onAbort = null;
        onRejected(error);
      },
    );
  }

}

/** The attempt's progress and log lines for `tools` (attempt-life.ts); null outside a worker's attempt. */
export function lifeOf(cancellation: Cancellation, job: Job): AttemptLife | null {
  return cancellation instanceof AttemptCancellation ? cancellation.lifeOf(job) : null;
}

/**
 * Jobs cancelled through the queue while a worker held them (the backend holds them cancelled already): a running
 * one's signal is aborted with reason "cancelled" and its outcome ignored; a buffered one is dropped.
 */
export function cancelHeld(slots: Slots, ids: string[], worker: { workerId: string; queue?: string; logger: Logger; events?: JobEvents }): void {
  const { events } = worker;
  for (const entry of slots.cancel(ids)) {
    withJob(entry.job, () => worker.logger.info("job cancelled while running; its handler's signal is aborted"));
    entry.cancellation.abort(CANCELLED);
    if (events?.has("job:cancelled")) events.emit("job:cancelled", { job: entry.job, queue: worker.queue ?? "default", workerId: worker.workerId });
  }
}
