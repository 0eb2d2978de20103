import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Job } from "../core/job.js";
import { expiredError, isExpired } from "../core/deadline.js";
import { DEFAULT_MAX_RESULT_BYTES } from "../core/result.js";
import type { SlotOffer } from "../core/queue-backend.js";
import { AttemptCancellation, cancelHeld } from "./cancellation.js";
import { createDeferred, sleep, type Deferred } from "./deferred.js";
import { Heartbeat } from "./heartbeat.js";
import { WorkerPresence } from "./presence.js";
import { OutcomeWriter } from "./outcome-writer.js";
import { FinishRate, prefetchTarget } from "./prefetch-policy.js";
import { shutdownWorker } from "./shutdown.js";
import { Slots, type Running } from "./slots.js";
import { ChainTurns } from "./turn-yield.js";
import { Attempts } from "./attempts.js";
import { setAsidePaused } from "./paused-handback.js";
import { waitForWork } from "./wait-for-work.js";
import { createSlotOffer } from "./slot-offer.js";
import { checkConcurrency, type WorkerOptions } from "./worker-options.js";
import type { LifeSink } from "./attempt-life.js";
import { DEFAULT_JOB_LOG_LINES } from "../core/job-life.js";

export type { WorkerOptions } from "./worker-options.js";
export { PREFETCH_FAIR_MAX, PREFETCH_HORIZON_MS, PREFETCH_MAX } from "./prefetch-policy.js";
export { JOB_CHAIN_TURN_MS } from "./turn-yield.js";

/** After handing paused tasks' jobs back (paused-handback.ts), the worker waits this long before claiming again. */
const HANDBACK_WAIT_MS = 500;

/**
 * Claims jobs up to `concurrency`, runs them, heartbeats their leases, and records each outcome. Idle, it waits on
 * the backend's wake-up (LISTEN/NOTIFY, blocking pop, consumer push) and only falls back to claiming every
 * `pollIntervalMs`. Its rooms: slots.ts (room), prefetch-policy.ts (how much to claim ahead), turn-yield.ts (letting
 * the event loop breathe), heartbeat.ts (leases), decide.ts (what an attempt's end means), outcome-writer.ts
 * (writing it), shutdown.ts. An attempt goes: claim → buffer → launch → handler → decide → write → finish.
 */
export class Worker {
  readonly id: string;
  private readonly options: WorkerOptions;
  readonly slots: Slots;
  readonly writer: OutcomeWriter;
  readonly heartbeat: Heartbeat;
  /** Its record in the backend's worker registry; null where the backend keeps none. */
  readonly presence: WorkerPresence | null;
  private readonly turns: ChainTurns;
  private readonly attempts: Attempts;
  private readonly rate = new FinishRate();
  readonly loopAbort = new AbortController();
  private slotFreed: Deferred = createDeferred();
  loop: Promise<void> | null = null;
  stopping = false;
  readonly stopNowSignal: Deferred = createDeferred();
  private stopped: Promise<void> | null = null;
  private processed = 0;
  /** The current idle wait; aborted when a paused task is resumed. */
  private idleWait: AbortController | null = null;
  unsubscribeResume: (() => void) | null = null;
  /** Shutdown waiting for the running attempts: resolved when the last one finishes. */
  allFinished: Deferred | null = null;
  private readonly slotOffer: SlotOffer;
  /** Where `tools.progress` and `tools.log` write (attempt-life.ts), shared by every attempt. */
  private readonly lifeSink: LifeSink;

  constructor(options: WorkerOptions) {
    checkConcurrency(options.concurrency);
    this.options = options;
    this.id = options.workerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    const { backend, leaseMs, logger } = options;
    this.slots = new Slots(options.concurrency);
    this.lifeSink = { workerId: this.id, backend, logger, maxLogLines: options.jobLogLines ?? DEFAULT_JOB_LOG_LINES };
    this.turns = new ChainTurns(() => this.fillSlots());
    this.writer = new OutcomeWriter({ backend, workerId: this.id, leaseMs, maxSnoozes: options.maxSnoozes ?? 100, maxResultBytes: options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES, logger, stopNow: this.stopNowSignal });
    this.attempts = new Attempts({ options, workerId: this.id, writer: this.writer, finish: this.finish, unhandled: this.unhandled });
    this.heartbeat = new Heartbeat({ backend, workerId: this.id, leaseMs, logger, held: () => this.slots.held(), cancelled: (ids) => cancelHeld(this.slots, ids, { ...this.options, workerId: this.id }) });
    this.presence = backend.capabilities.workers
      ? new WorkerPresence({
          store: backend.workerStore(),
          workerId: this.id,
          queue: options.queue ?? "default",
          concurrency: options.concurrency,
          logger,
          running: () => [...this.slots.running.values()].map((r) => ({ id: r.job.id, startedAt: r.startedAt })),
          options: options.registry,
        })
      : null;
    this.slotOffer = createSlotOffer({
      workerId: this.id,
      leaseMs,
      paused: options.paused,
      slots: this.slots,
      stopping: () => this.stopping,
      delivered: (jobs) => {
        this.heartbeat.hold(jobs);
        // Ahead of anything claimed while their insert was in flight: these had their slots reserved.
        this.slots.buffer.unshift(...jobs);
        this.fillSlots();
      },
    });
  }

  get activeJobs(): readonly Job[] {
    return [...this.slots.running.values()].map((r) => r.job);
  }
  get processedCount(): number {
    return this.processed;
  }

  start(): void {
    if (this.loop) return;
    this.heartbeat.start();
    this.presence?.start();
    this.unsubscribeResume = this.options.paused?.onResume(() => this.idleWait?.abort()) ?? null;
    this.loop = this.run();
  }

  /**
   * Graceful stop: claim nothing more, let running jobs finish for `graceMs`, then cancel the rest and
   * release them at once without spending an attempt. `stopNow()` (a second signal) ends the wait early.
   */
  stop(params: { graceMs: number }): Promise<void> {
    this.stopped ??= shutdownWorker(this, this.options, params.graceMs);
    return this.stopped;
  }

  /** Ends the grace wait immediately; running jobs are released. Safe to call at any time. */
  stopNow(): void {
    this.stopNowSignal.resolve();
  }

  /** Wakes the loop waiting for a slot (shutdown). */
  wakeLoop = (): void => this.slotFreed.resolve();

  private async run(): Promise<void> {
    const { backend, leaseMs, pollIntervalMs, logger } = this.options;
    const slots = this.slots;
    let failures = 0;
    while (!this.stopping) {
      this.fillSlots();
      // A broker that pushes ahead holds the prefetch itself (told with each claim); no local buffer then.
      const pushesAhead = backend.capabilities.pushesAhead;
      const limits = this.options.claimLimits;
      const target = prefetchTarget({ fixed: this.options.prefetch, concurrency: slots.concurrency, pushesAhead, jobsPerMs: this.rate.read(this.processed), fair: limits?.fair ?? false });
      const prefetch = pushesAhead ? 0 : target;
      const capacity = slots.claimable(prefetch);
      const startable = slots.free();
      // Claim when a slot waits with nothing buffered, or once the buffer is down to half: the next batch is
      // then on its way while the rest of this one runs, and slots never wait for a round trip.
      if (capacity <= 0 || (slots.buffer.length > 0 && slots.buffer.length * 2 > prefetch)) {
        await this.waitForSlot();
        continue;
      }
      let claimed: Job[];
      try {
        // After a blocked event loop, this process's late heartbeats go first (lease/local-beats.ts).
        const late = Heartbeat.beforeClaim();
        if (late) await late;
        claimed = await backend.claim({
          workerId: this.id,
          limit: capacity,
          leaseMs,
          pausedTasks: this.options.paused?.names() ?? [],
          // A job of a task whose starts count is claimed only to start now, never to wait in the buffer.
          startable,
          ...(pushesAhead ? { pushAhead: target } : {}),
        });
        failures = 0;
      } catch (error) {
        failures++;
        logger.error("claim failed; retrying", { error, backend: backend.kind });
        await sleep(Math.min(5000, 100 * 2 ** Math.min(failures, 6)), this.loopAbort.signal);
        continue;
      }
      if (this.stopping) {
        // Claimed while stop() began: give these back untouched.
        if (claimed.length > 0) await backend.release({ workerId: this.id, jobs: claimed }).catch(() => undefined);
        break;
      }
      const runnable = this.setAsidePaused(claimed);
      this.heartbeat.hold(runnable);
      slots.buffer.push(...runnable);
      this.fillSlots();
      if (runnable.length < claimed.length) await sleep(HANDBACK_WAIT_MS, this.loopAbort.signal);
      if (claimed.length < capacity) {
        // The queue is drained for now: wait for a wake-up with a slot free, else for a slot. A claim that took as
        // many jobs as it could start proves nothing about the jobs of tasks whose starts count (claimed only for
        // free slots): the next claim is made when a slot frees, not after a wake-up or the poll interval.
        if (slots.running.size >= slots.concurrency || (limits?.counted && claimed.length >= startable)) {
          await this.waitForSlot();
          continue;
        }
        try {
          await this.idle(pollIntervalMs);
        } catch (error) {
          logger.error("waiting for work failed", { error });
          await sleep(1000, this.loopAbort.signal);
        }
      }
    }
  }

  private fillSlots(): void {
    // This turn has run jobs long enough: the next ones start in the following turn (turn-yield.ts).
    if (this.turns.yielded) return;
    const { buffer } = this.slots;
    if (this.options.paused?.size && buffer.length > 0) buffer.splice(0, buffer.length, ...this.setAsidePaused(buffer));
    while (buffer.length > 0 && this.slots.canStart() && !this.stopping) this.launch(buffer.shift()!);
  }

  /** Waits for work like the backend says, also ending when a paused task is resumed (or on shutdown). */
  private async idle(timeoutMs: number): Promise<void> {
    const wait = new AbortController();
    this.idleWait = wait;
    try {
      await waitForWork({ backend: this.options.backend, offer: this.slotOffer, loopAbort: this.loopAbort.signal, wait, timeoutMs, paused: this.options.paused });
    } finally {
      this.idleWait = null;
    }
  }

  /** Jobs of paused tasks go back (paused-handback.ts); the others are returned. */
  private setAsidePaused(jobs: Job[]): Job[] {
    const { paused, backend, logger } = this.options;
    return setAsidePaused(jobs, { paused, backend, workerId: this.id, writer: this.writer, logger });
  }

  private async waitForSlot(): Promise<void> {
    await this.slotFreed.promise;
    this.slotFreed = createDeferred();
  }

  private launch(job: Job): void {
    // Past its deadline before its first start, it never starts (docs/flow-control.md#deadlines). A flow's steps have none.
    if (job.expiresAt !== null && job.attempts <= 1 && job.flow === null && isExpired(job)) return this.expire(job);
    const entry: Running = { job, cancellation: new AttemptCancellation(this.lifeSink), cancelled: false, startedAt: Date.now() };
    this.slots.running.set(job.id, entry);
    try {
      this.attempts.start(entry);
    } catch (error) {
      // Not from inside the fillSlots loop that launched it.
      queueMicrotask(() => this.unhandled(entry, error));
    }
  }

  /**
   * The attempt is over (its outcome handed to the backend, or abandoned at shutdown): the slot is free. The
   * next buffered job starts here and now, even while the loop awaits a claim, unless this turn of the event
   * loop has run jobs long enough (JOB_CHAIN_TURN_MS). Once per attempt.
   */
  private readonly finish = (entry: Running): void => {
    const { running } = this.slots;
    if (running.get(entry.job.id) !== entry) return;
    running.delete(entry.job.id);
    this.processed++;
    if (running.size === 0) this.allFinished?.resolve();
    this.turns.fillInTurn();
    this.slotFreed.resolve();
  };

  /** Ends a job claimed after its deadline without running it; its slot was never taken. */
  private expire(job: Job): void {
    const { backend, logger } = this.options;
    const error = expiredError(job.expiresAt!, Math.max(0, job.attempts - 1), "claim");
    this.writer.settle(job.id, () => backend.expire({ workerId: this.id, job, error }));
    const events = this.options.events;
    if (events?.has("job:expired")) events.emit("job:expired", { job, queue: this.options.queue ?? "default", workerId: this.id, attemptError: error });
    logger.info("job not started before its deadline: expired without running", { job_id: job.id, task: job.task, deadline: job.expiresAt!.toISOString() });
  }

  /** Something in the worker's own handling of an attempt threw: logged, and the slot is freed. */
  private readonly unhandled = (entry: Running, error: unknown): void => {
    this.options.logger.error("an attempt ended without its outcome being handled", { error, job_id: entry.job.id });
    this.finish(entry);
  };

}
