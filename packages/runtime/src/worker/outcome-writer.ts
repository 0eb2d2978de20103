import { spawnedBy } from "../core/flow-tools.js";
import type { AttemptError, Job } from "../core/job.js";
import { TOO_MANY_SNOOZES } from "../core/outcome.js";
import type { QueueBackend } from "../core/queue-backend.js";
import { storedResult } from "../core/result.js";
import { withJob } from "../context/context.js";
import type { Logger } from "../observability/logger.js";
import type { Decision } from "./decide.js";
import { AttemptOutcome, type AttemptRun } from "../core/job-life.js";
import type { Deferred } from "./deferred.js";
import { writeOutcomeAgain } from "./write-outcome-again.js";

/**
 * Writes attempts' outcomes to the backend without holding their slots: the next job starts while this one's
 * outcome is written (PostgreSQL batches them). Until it is written the job stays leased, so a crash in between
 * only means it runs again. An unreachable backend is tried again while the lease surely holds
 * (write-outcome-again.ts): the heartbeat last pushed it at most a third of the lease before the attempt ended,
 * so for two thirds of the lease from now, or until shutdown's grace is over. Shutdown waits for every write.
 */
export class OutcomeWriter {
  /** Outcomes handed to the backend and not yet written. */
  private readonly pending = new Set<Promise<void>>();
  /** When shutdown gives up waiting (its grace period over): writes stop trying again then. */
  graceEndsAt = Infinity;

  constructor(
    private readonly params: {
      backend: QueueBackend;
      workerId: string;
      leaseMs: number;
      maxSnoozes: number;
      maxResultBytes: number;
      logger: Logger;
      stopNow: Deferred;
    },
  ) {}

  /** Writes one decision about `job` (never a cancelled attempt's). */
  write(job: Job, decision: Decision, run?: AttemptRun): void {
    const { backend, workerId, logger } = this.params;
    switch (decision.kind) {
      case "complete": {
        const result = storedResult(decision.value, this.params.maxResultBytes);
        const spawn = job.flow ? spawnedBy(job) : undefined;
        this.settle(job.id, () => backend.complete(spawn ? { workerId, job, result, spawn, run } : result ? { workerId, job, result, run } : { workerId, job, run }));
        return;
      }
      case "snooze":
        this.snooze(job, decision.availableAt, run);
        return;
      case "retry":
        this.settle(job.id, () => backend.retry({ workerId, job, error: decision.error, availableAt: decision.availableAt, run }));
        withJob(job, () => logger.warn("job failed; will retry", { error: decision.cause, retry_at: decision.availableAt.toISOString() }));
        return;
      case "dead":
        this.settle(job.id, () => backend.kill({ workerId, job, error: decision.error, run }));
        if (decision.why === "unknown task") logger.error("unknown task dead-lettered", { job_id: job.id, task: job.task });
        else if (decision.why === "permanent") {
          withJob(job, () => logger.error("job failed permanently (PermanentError); dead-lettered without a retry", { error: decision.cause }));
        } else {
          withJob(job, () => logger.error("job failed for the last time; dead-lettered", { error: decision.cause, max_attempts: decision.maxAttempts }));
        }
        return;
    }
  }

  /** Hands one write to the backend, tried again while it meets an unreachable backend (see the class). */
  settle(jobId: string, record: () => Promise<void>): void {
    const leaseHoldsUntil = Date.now() + (this.params.leaseMs * 2) / 3;
    const written: Promise<void> = record().then(
      () => {
        this.pending.delete(written);
      },
      (error: unknown) =>
        writeOutcomeAgain({
          firstError: error,
          write: record,
          jobId,
          until: () => Math.min(leaseHoldsUntil, this.graceEndsAt),
          stopNow: this.params.stopNow,
          logger: this.params.logger,
        }).finally(() => this.pending.delete(written)),
    );
    this.pending.add(written);
  }

  /** A write that is not an outcome (jobs handed back) but that shutdown must wait for all the same. */
  track(write: Promise<void>): void {
    const tracked: Promise<void> = write.finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }

  /** Every write handed over so far, written (or given up). */
  async flush(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  /**
   * The handler returned snooze(ms): the job comes back then with its attempt given back, unless it has snoozed
   * max_snoozes times already; the backend checks that against its own count, atomically.
   */
  private snooze(job: Job, availableAt: Date, run: AttemptRun | undefined): void {
    const { backend, workerId, logger, maxSnoozes } = this.params;
    const error: AttemptError = {
      attempt: job.attempts,
      at: new Date().toISOString(),
      class: "SnoozeLimit",
      message: `"${job.task}" snoozed ${maxSnoozes} times, the most [plugin.queue] max_snoozes allows; it was dead-lettered`,
      reason: TOO_MANY_SNOOZES,
    };
    this.settle(job.id, async () => {
      const { snoozed } = await backend.snooze({ workerId, job, availableAt, maxSnoozes, run });
      if (snoozed) return;
      // Refused: the limit was reached, or the job is no longer this worker's (then kill changes nothing either).
      await backend.kill({ workerId, job, error, run: run && { ...run, outcome: AttemptOutcome.dead } });
      withJob(job, () => logger.error("job snoozed too often; dead-lettered", { max_snoozes: maxSnoozes }));
    });
  }
}
