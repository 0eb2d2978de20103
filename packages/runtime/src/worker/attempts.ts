import { loadStepInputs } from "../core/flow-tools.js";
import type { Job } from "../core/job.js";
import type { JobEvents } from "../core/job-events.js";
import type { TaskDefinition } from "../core/task.js";
import { withJob } from "../context/context.js";
import { JobTimeoutError } from "../errors/jfast-error.js";
import { decide, type AttemptResult, type Decision } from "./decide.js";
import type { OutcomeWriter } from "./outcome-writer.js";
import type { Running } from "./slots.js";
import type { WorkerOptions } from "./worker-options.js";
import { AttemptOutcome, type AttemptRun } from "../core/job-life.js";

const OUTCOME_OF: Record<Decision["kind"], AttemptOutcome> = {
  complete: AttemptOutcome.completed,
  retry: AttemptOutcome.failed,
  dead: AttemptOutcome.dead,
  snooze: AttemptOutcome.snoozed,
};

/**
 * One attempt from its start to its end: the handler run (with its timeout), the outcome decided (decide.ts) and
 * handed to the writer, announced as job events (core/job-events.ts), and its slot given back to the worker
 * (`finish`). Results, progress and flows hook in at `ended`, where the attempt's value is known.
 */
export class Attempts {
  private readonly options: WorkerOptions;
  /** Undefined without listeners' app (a bare Worker): each emit below is then one property read. */
  private readonly events: JobEvents | undefined;
  private readonly queue: string;

  constructor(
    private readonly params: {
      options: WorkerOptions;
      workerId: string;
      writer: OutcomeWriter;
      finish(entry: Running): void;
      unhandled(entry: Running, error: unknown): void;
    },
  ) {
    this.options = params.options;
    this.events = params.options.events;
    this.queue = params.options.queue ?? "default";
  }

  /**
   * Starts one attempt. Written with callbacks rather than async/await: a no-op job's cost is mostly the
   * promises around it, and each promise also pays the context tracking of AsyncLocalStorage.
   */
  start(entry: Running): void {
    const { job, cancellation } = entry;
    const events = this.events;
    if (events?.has("job:claimed")) events.emit("job:claimed", { job, queue: this.queue, workerId: this.params.workerId, claimedAt: Date.now() });
    const definition = this.options.lookup(job.task);
    if (!definition) {
      this.ended(entry, undefined, undefined, 0, { ok: true, value: undefined });
      return;
    }
    // An isolated handler's timeout counts from its start in the isolate, and its runner keeps it (isolate/).
    const timeoutMs = definition.options.isolate ? null : (job.timeoutMs ?? definition.options.timeoutMs ?? null);
    let timer: NodeJS.Timeout | undefined;
    if (timeoutMs !== null) {
      timer = setTimeout(() => cancellation.abort(new JobTimeoutError(`"${job.task}" ran past its timeout of ${timeoutMs} ms`)), timeoutMs);
    }
    if (job.flow) {
      // A flow step reads what the steps it runs after returned first (core/flow-tools.ts); a failed read fails the attempt.
      loadStepInputs(job, (jobIds) => this.options.backend.parentOutcomes({ jobIds })).then(
        () => this.run(entry, definition, timer),
        (error: unknown) => this.ended(entry, definition, timer, performance.now(), { ok: false, error }),
      );
      return;
    }
    this.run(entry, definition, timer);
  }

  private run(entry: Running, definition: TaskDefinition, timer: NodeJS.Timeout | undefined): void {
    const { job, cancellation } = entry;
    const events = this.events;
    if (events?.has("job:started")) events.emit("job:started", { job, queue: this.queue, workerId: this.params.workerId });
    const startedAt = performance.now();
    let work: Promise<unknown>;
    try {
      work = withJob(job, () => this.options.execute(definition, job, cancellation));
    } catch (error) {
      work = Promise.reject(error);
    }
    cancellation.whenSettled(
      work,
      (value) => this.ended(entry, definition, timer, startedAt, { ok: true, value }),
      (error) => this.ended(entry, definition, timer, startedAt, { ok: false, error }),
    );
  }

  /** One attempt's end: decided (decide.ts), written (outcome-writer.ts), observed, and its slot freed. */
  private ended(entry: Running, definition: TaskDefinition | undefined, timer: NodeJS.Timeout | undefined, startedAt: number, result: AttemptResult): void {
    try {
      clearTimeout(timer);
      // Given up at shutdown, or cancelled through the queue: the backend already holds what became of it.
      if (!entry.cancelled) {
        const { job } = entry;
        const durationMs = definition ? performance.now() - startedAt : 0;
        const now = Date.now();
        const decision = decide({
          job,
          definition,
          result,
          defaultMaxAttempts: this.options.defaultMaxAttempts,
          backoffBaseMs: this.options.backoffBaseMs,
          now,
        });
        const run = this.record(entry, decision, now, durationMs);
        this.params.writer.write(job, decision, run);
        if (this.events) this.announce(this.events, job, decision, durationMs);
      }
      // An unknown task ends inside the fillSlots loop that launched it: a buffer of them would recurse.
      if (!definition) queueMicrotask(() => this.params.finish(entry));
      else this.params.finish(entry);
    } catch (unexpected) {
      this.params.unhandled(entry, unexpected);
    }
  }

  /**
   * The attempt's record, written with its outcome (docs/jobs.md#timing): the start is taken as the end less the
   * measured run, so an attempt reads the clock once. Progress and log lines join it only when the handler made any.
   */
  private record(entry: Running, decision: Decision, now: number, durationMs: number): AttemptRun {
    const { job } = entry;
    const startedAt = Math.round(now - durationMs);
    const run: AttemptRun = {
      attempt: job.attempts,
      startedAt,
      durationMs: Math.round(durationMs * 100) / 100,
      workerId: this.params.workerId,
      outcome: OUTCOME_OF[decision.kind],
    };
    if (job.attempts === 1) run.waitMs = Math.max(0, startedAt - job.availableAt.getTime());
    entry.cancellation.life?.end(run);
    return run;
  }

  /** The attempt's end as job events, once its outcome is handed to the writer. */
  private announce(events: JobEvents, job: Job, decision: Decision, durationMs: number): void {
    const { queue } = this;
    const { workerId } = this.params;
    switch (decision.kind) {
      case "complete":
        if (events.has("job:completed")) events.emit("job:completed", { job, queue, workerId, value: decision.value, durationMs });
        return;
      case "snooze":
        if (events.has("job:snoozed")) events.emit("job:snoozed", { job, queue, workerId, until: decision.availableAt, durationMs });
        return;
      case "retry":
        if (events.has("job:failed")) {
          events.emit("job:failed", { job, queue, workerId, error: decision.cause, attemptError: decision.error, retryAt: decision.availableAt, durationMs });
        }
        return;
      case "dead":
        // An unknown task's job never ran: there is no failure to tell, only the dead letter.
        if (decision.why !== "unknown task" && events.has("job:failed")) {
          events.emit("job:failed", { job, queue, workerId, error: decision.cause, attemptError: decision.error, retryAt: null, durationMs });
        }
        if (events.has("job:dead")) events.emit("job:dead", { job, queue, workerId, attemptError: decision.error, reason: decision.why, durationMs });
        return;
    }
  }
}
