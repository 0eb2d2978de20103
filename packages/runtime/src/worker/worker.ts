import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { backoffDelayMs } from "../core/backoff.js";
import { MAX_CONCURRENCY } from "../core/concurrency.js";
import { errorToAttempt, type AttemptError, type Job } from "../core/job.js";
import { CANCELLED, Snooze, TOO_MANY_SNOOZES } from "../core/outcome.js";
import type { PausedTaskSet } from "../core/pause.js";
import type { QueueBackend, SlotOffer } from "../core/queue-backend.js";
import type { Cancellation, TaskDefinition } from "../core/task.js";
import { withJob } from "../context/context.js";
import { ConfigError, JobTimeoutError } from "../errors/jfast-error.js";
import { PermanentError } from "../errors/permanent-error.js";
import type { Logger } from "../observability/logger.js";
import type { AttemptObserver } from "../observability/metrics.js";
import { AttemptCancellation } from "./cancellation.js";
import { createDeferred, sleep, type Deferred } from "./deferred.js";
import { writeOutcomeAgain } from "./write-outcome-again.js";
import { attachHeartbeatBackstop, type HeartbeatBackstop } from "./lease/heartbeat-backstop.js";
import { beatLateWorkers, registerLocalBeat, type LocalBeat } from "./lease/local-beats.js";

export interface WorkerOptions {
  backend: QueueBackend;
  /** Finds the handler for a task name; undefined means the job is dead at once ("unknown task"). */
  lookup: (task: string) => TaskDefinition | undefined;
  /** Runs one attempt (opens the TaskSession, claims the inbox key, calls the handler). */
  execute: (definition: TaskDefinition, job: Job, cancellation: Cancellation) => Promise<unknown>;
  logger: Logger;
  concurrency: number;
  leaseMs: number;
  backoffBaseMs: number;
  /** Slow safety net: how long an idle worker waits for a wake-up before claiming anyway. */
  pollIntervalMs: number;
  defaultMaxAttempts: number;
  /** `[plugin.queue] max_snoozes`: past this many snoozes a job is dead-lettered (default 100). */
  maxSnoozes?: number;
  workerId?: string;
  /** Told of each claim and each attempt's outcome (the /metrics counters and histograms). */
  observer?: AttemptObserver;
  /**
   * Jobs claimed ahead of a free slot and held (leased, heartbeated) in a local buffer, so that claims go in
   * batches instead of one round trip (and one commit) per finished job. A backend whose broker pushes ahead
   * (`QueueBackend.pushesAhead`: RabbitMQ) is told the same target with each claim and the broker holds those
   * jobs instead (its prefetch); the worker then keeps no buffer. Buffered jobs are released, attempt returned,
   * on shutdown.
   * Undefined: adaptive, about PREFETCH_HORIZON_MS of work at the rate jobs have been finishing, never more
   * than PREFETCH_MAX jobs nor (except for a broker that pushes ahead) fewer than `concurrency`.
   */
  prefetch?: number;
  /** Paused tasks (docs/worker.md#pausing-a-task): not claimed where the backend filters, else handed back. */
  paused?: PausedTaskSet;
}

interface Running {
  job: Job;
  cancellation: AttemptCancellation;
  /**
   * Set when shutdown gave up on it (it was released) or the job was cancelled through the queue (the backend
   * already holds it cancelled): its outcome is ignored.
   */
  cancelled: boolean;
}

/** An adaptive buffer holds about this much work: enough to cover a claim's round trip many times over. */
export const PREFETCH_HORIZON_MS = 100;
/** ...and never more jobs than this, however short they are. */
export const PREFETCH_MAX = 1000;
/** The finishing rate is sampled over windows at least this long. */
const RATE_WINDOW_MS = 20;

/**
 * Jobs that finish without waiting on I/O (a cached lookup, a no-op) start the next buffered job from the
 * previous one's promise chain, so a buffer of hundreds would run in one turn of the event loop: nothing else
 * runs until it is empty — not the claim of the next batch (node-postgres sends a statement from
 * process.nextTick, after the chain), not the answers of claims and completions, not heartbeats or the
 * service's own requests. After this long in one turn the next job starts in the following turn instead.
 */
export const JOB_CHAIN_TURN_MS = 1;

/** A paused task's job the backend handed out anyway comes back claimable after this long... */
const HANDBACK_DELAY_MS = 2000;
/** ...and the worker waits this long before claiming again, so a backlog of paused jobs is not spun through. */
const HANDBACK_WAIT_MS = 500;

class ShutdownAbort extends Error {
  constructor() {
    super("the worker is shutting down; the job was released back to the queue");
    this.name = "ShutdownAbort";
  }
}

/**
 * Claims jobs up to `concurrency`, runs them, heartbeats their leases, and records each outcome.
 * Idle, it waits on the backend's wake-up (LISTEN/NOTIFY, blocking pop, consumer push) and only falls back
 * to claiming every `pollIntervalMs`.
 */
export class Worker {
  readonly id: string;
  private readonly options: WorkerOptions;
  private readonly running = new Map<string, Running>();
  private readonly buffer: Job[] = [];
  /** Outcomes handed to the backend and not yet written. */
  private readonly outcomes = new Set<Promise<void>>();
  private readonly loopAbort = new AbortController();
  private slotFreed: Deferred = createDeferred();
  private loop: Promise<void> | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  /** Keeps the leases while the event loop is blocked (docs/worker.md#a-blocked-event-loop-does-not-lose-the-lease); null for in-process leases. */
  private backstop: HeartbeatBackstop | null = null;
  private localBeat: LocalBeat | null = null;
  /** The heartbeat in flight: a claim of this process waits for it rather than race it (lease/local-beats.ts). */
  private beating: Promise<void> | null = null;
  private unregisterLocalBeat: (() => void) | null = null;
  private stopping = false;
  private stopNowSignal: Deferred = createDeferred();
  /** When shutdown gives up waiting (its grace period over): outcome writes stop trying again then. */
  private graceEndsAt = Infinity;
  private stopped: Promise<void> | null = null;
  private processed = 0;
  /** The current idle wait; aborted by wake() when a paused task is resumed. */
  private idleWait: AbortController | null = null;
  private unsubscribeResume: (() => void) | null = null;
  /** Jobs finished per ms, sampled over RATE_WINDOW_MS windows (adaptive prefetch). */
  private finishRate = 0;
  private rateSampleAt = performance.now();
  private rateSampleProcessed = 0;
  /** Slots reserved by an in-process hand-off whose write is in flight (see slotOffer). */
  private handOffsReserved = 0;
  private handOffsSettled: Deferred | null = null;
  /**
   * What an idle worker offers a backend that hands jobs over in process (QueueBackend.offerSlots): its free
   * slots, never its prefetch buffer (the point is the latency of a job for a worker with nothing to do).
   */
  private readonly slotOffer: SlotOffer;
  /** When the current run of jobs started back to back began (performance.now()), -1 between turns. */
  private chainStartedAt = -1;
  /** A job finished after JOB_CHAIN_TURN_MS: the next ones start in the following turn (see endChainTurn). */
  private chainYielded = false;
  /** Shutdown waiting for the running attempts: resolved when the last one finishes. */
  private allFinished: Deferred | null = null;

  constructor(options: WorkerOptions) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1 || options.concurrency > MAX_CONCURRENCY) {
      throw new ConfigError(`a worker's concurrency must be a whole number from 1 to ${MAX_CONCURRENCY}, got ${options.concurrency}`, {
        code: "CONFIG_INVALID",
        hint: `run more worker processes for more throughput than ${MAX_CONCURRENCY} slots`,
        docs: "jfast docs worker#concurrency",
      });
    }
    this.options = options;
    this.id = options.workerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.slotOffer = {
      workerId: this.id,
      leaseMs: options.leaseMs,
      pausedTasks: () => this.options.paused?.names() ?? [],
      reserve: (wanted) => {
        if (this.stopping) return 0;
        const free = this.options.concurrency - this.running.size - this.buffer.length - this.handOffsReserved;
        const granted = Math.max(0, Math.min(wanted, free));
        this.handOffsReserved += granted;
        return granted;
      },
      deliver: (jobs, reserved) => {
        this.settleHandOff(reserved);
        // Ahead of anything claimed while their insert was in flight: these had their slots reserved.
        // Stopping: shutdown waits for hand-offs in flight before it releases the buffer, these included.
        this.backstop?.hold(jobs.map((job) => job.id));
        this.buffer.unshift(...jobs);
        this.fillSlots();
      },
      cancel: (reserved) => this.settleHandOff(reserved),
    };
  }

  get activeJobs(): readonly Job[] {
    return [...this.running.values()].map((r) => r.job);
  }

  get processedCount(): number {
    return this.processed;
  }

  start(): void {
    if (this.loop) return;
    const beat = Math.max(50, Math.floor(this.options.leaseMs / 3));
    this.heartbeat = setInterval(() => void this.beatOnce(), beat);
    this.heartbeat.unref();
    this.localBeat = { lateAfterMs: beat * 1.5, lastBeatAt: performance.now(), beat: () => this.beatOnce() };
    this.unregisterLocalBeat = registerLocalBeat(this.localBeat);
    const spec = this.options.backend.leaseExtender?.() ?? null;
    if (spec) {
      this.backstop = attachHeartbeatBackstop({
        spec,
        workerId: this.id,
        leaseMs: this.options.leaseMs,
        logger: this.options.logger,
        onCancelled: (ids) => this.cancelJobs(ids),
      });
    }
    this.unsubscribeResume = this.options.paused?.onResume(() => this.idleWait?.abort()) ?? null;
    this.loop = this.run();
  }

  /**
   * Graceful stop: claim nothing more, let running jobs finish for `graceMs`, then cancel the rest and
   * release them at once without spending an attempt. `stopNow()` (a second signal) ends the wait early.
   */
  stop(params: { graceMs: number }): Promise<void> {
    this.stopped ??= this.shutdown(params.graceMs);
    return this.stopped;
  }

  /** Ends the grace wait immediately; running jobs are released. Safe to call at any time. */
  stopNow(): void {
    this.stopNowSignal.resolve();
  }

  private async shutdown(graceMs: number): Promise<void> {
    this.stopping = true;
    this.graceEndsAt = Date.now() + graceMs;
    this.unsubscribeResume?.();
    this.loopAbort.abort();
    this.slotFreed.resolve();
    await this.loop;
    // A job handed over in process while stop() began lands in the buffer: wait for those writes first.
    if (this.handOffsReserved > 0) await (this.handOffsSettled ??= createDeferred()).promise;
    const buffered = this.buffer.splice(0);
    if (buffered.length > 0) {
      // Claimed ahead but never started: back at once.
      await this.options.backend.release({ workerId: this.id, jobs: buffered }).catch((error) => {
        this.options.logger.error("could not release prefetched jobs; they return when their lease expires", { error });
      });
    }
    if (this.running.size > 0) {
      this.allFinished = createDeferred();
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
      await Promise.race([this.allFinished.promise, grace, this.stopNowSignal.promise]);
      clearTimeout(timer);
    }
    const leftovers = [...this.running.values()];
    if (leftovers.length > 0) {
      for (const r of leftovers) {
        r.cancelled = true;
        r.cancellation.abort(new ShutdownAbort());
      }
      try {
        await this.options.backend.release({ workerId: this.id, jobs: leftovers.map((r) => r.job) });
        this.options.logger.warn("released running jobs at shutdown", { released: leftovers.map((r) => r.job.id) });
      } catch (error) {
        // Not lost: their leases expire and another worker picks them up.
        this.options.logger.error("could not release running jobs at shutdown; they return when their lease expires", { error });
      }
    }
    // Outcomes of jobs that finished are written before the backend may close.
    await Promise.all([...this.outcomes]);
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.unregisterLocalBeat?.();
    this.backstop?.detach();
  }

  private async run(): Promise<void> {
    const { backend, concurrency, leaseMs, pollIntervalMs, logger } = this.options;
    let failures = 0;
    while (!this.stopping) {
      this.fillSlots();
      // A broker that pushes ahead holds the prefetch itself (told with each claim); no local buffer then.
      const target = this.prefetchTarget();
      const prefetch = backend.pushesAhead ? 0 : target;
      // Slots reserved by an in-process hand-off are taken: its jobs arrive once their insert commits.
      const capacity = concurrency + prefetch - this.running.size - this.buffer.length - this.handOffsReserved;
      // Claim when a slot waits with nothing buffered, or once the buffer is down to half: the next batch is
      // then on its way while the rest of this one runs, and slots never wait for a round trip.
      const shouldClaim = capacity > 0 && (this.buffer.length === 0 || this.buffer.length * 2 <= prefetch);
      if (!shouldClaim) {
        await this.waitForSlot();
        continue;
      }
      let claimed: Job[];
      try {
        // After a blocked event loop, this process's late heartbeats go first (lease/local-beats.ts).
        const late = beatLateWorkers();
        if (late) await late;
        claimed = await backend.claim({
          workerId: this.id,
          limit: capacity,
          leaseMs,
          pausedTasks: this.options.paused?.names() ?? [],
          // A limited task's job is claimed only to start now, never to wait in the buffer (its start counts).
          startable: Math.max(0, concurrency - this.running.size - this.buffer.length - this.handOffsReserved),
          ...(backend.pushesAhead ? { pushAhead: target } : {}),
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
      if (runnable.length > 0) this.backstop?.hold(runnable.map((job) => job.id));
      this.buffer.push(...runnable);
      this.fillSlots();
      if (runnable.length < claimed.length) await sleep(HANDBACK_WAIT_MS, this.loopAbort.signal);
      if (claimed.length < capacity) {
        // The queue is drained for now: wait for a wake-up with a slot free, else for a slot.
        if (this.running.size >= concurrency) {
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

  /**
   * How many jobs the buffer should hold beyond the running ones (see WorkerOptions.prefetch). For a broker
   * that pushes ahead there is no floor of `concurrency`: jobs it holds unacked for a busy worker count
   * against its consumer_timeout, so with slow jobs it pushes none ahead.
   */
  private prefetchTarget(): number {
    const { prefetch, concurrency, backend } = this.options;
    if (prefetch !== undefined) return Math.max(0, prefetch);
    const now = performance.now();
    const elapsed = now - this.rateSampleAt;
    if (elapsed >= RATE_WINDOW_MS) {
      this.finishRate = (this.processed - this.rateSampleProcessed) / elapsed;
      this.rateSampleAt = now;
      this.rateSampleProcessed = this.processed;
    }
    const floor = backend.pushesAhead ? 0 : concurrency;
    return Math.min(PREFETCH_MAX, Math.max(floor, Math.ceil(this.finishRate * PREFETCH_HORIZON_MS)));
  }

  private fillSlots(): void {
    // This turn has run jobs long enough: endChainTurn starts the next ones in the following turn.
    if (this.chainYielded) return;
    if (this.options.paused?.size && this.buffer.length > 0) this.buffer.splice(0, this.buffer.length, ...this.setAsidePaused(this.buffer));
    // A slot reserved by a hand-off in flight is kept for it, not given to a job claimed meanwhile.
    while (this.buffer.length > 0 && this.running.size + this.handOffsReserved < this.options.concurrency && !this.stopping) {
      this.launch(this.buffer.shift()!);
    }
  }

  /** Waits for work like the backend says, also ending when a paused task is resumed (or on shutdown). */
  private async idle(timeoutMs: number): Promise<void> {
    const wait = new AbortController();
    const stop = () => wait.abort();
    this.loopAbort.signal.addEventListener("abort", stop, { once: true });
    this.idleWait = wait;
    const withdraw = this.options.backend.offerSlots?.(this.slotOffer);
    try {
      if (this.loopAbort.signal.aborted) return;
      await this.options.backend.waitForWork({ signal: wait.signal, timeoutMs, pausedTasks: this.options.paused?.names() ?? [] });
    } finally {
      withdraw?.();
      this.idleWait = null;
      this.loopAbort.signal.removeEventListener("abort", stop);
    }
  }

  /**
   * Keeps the jobs whose task is not paused and hands the others back, attempt returned, claimable again in
   * HANDBACK_DELAY_MS (a backend that cannot filter at claim, or a job claimed ahead just before its task was
   * paused). Shutdown waits for the hand-back like for any outcome.
   */
  private setAsidePaused(jobs: Job[]): Job[] {
    const paused = this.options.paused;
    if (!paused?.size || jobs.length === 0) return jobs;
    const back = jobs.filter((job) => paused.has(job.task));
    if (back.length === 0) return jobs;
    const written: Promise<void> = this.options.backend
      .release({ workerId: this.id, jobs: back, availableAt: new Date(Date.now() + HANDBACK_DELAY_MS) })
      .catch((error: unknown) => {
        this.options.logger.error("could not hand back a paused task's jobs; they return when their lease expires", { error });
      })
      .finally(() => this.outcomes.delete(written));
    this.outcomes.add(written);
    return jobs.filter((job) => !paused.has(job.task));
  }

  private settleHandOff(reserved: number): void {
    this.handOffsReserved -= reserved;
    if (this.handOffsReserved === 0 && this.handOffsSettled) {
      this.handOffsSettled.resolve();
      this.handOffsSettled = null;
    }
  }

  /** fillSlots, or in the next turn of the event loop if this one has started jobs for JOB_CHAIN_TURN_MS. */
  private fillSlotsInTurn(): void {
    if (this.chainStartedAt < 0) {
      this.chainStartedAt = performance.now();
      // Runs after this turn's microtasks and process.nextTick callbacks (a claim node-postgres is sending).
      setImmediate(this.endChainTurn);
    } else if (this.chainYielded || performance.now() - this.chainStartedAt >= JOB_CHAIN_TURN_MS) {
      this.chainYielded = true;
      return;
    }
    this.fillSlots();
  }

  private readonly endChainTurn = (): void => {
    this.chainStartedAt = -1;
    if (!this.chainYielded) return;
    this.chainYielded = false;
    this.fillSlots();
  };

  private async waitForSlot(): Promise<void> {
    await this.slotFreed.promise;
    this.slotFreed = createDeferred();
  }

  private launch(job: Job): void {
    const entry: Running = { job, cancellation: new AttemptCancellation(), cancelled: false };
    this.running.set(job.id, entry);
    try {
      this.runOne(entry);
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
  private finish(entry: Running): void {
    if (this.running.get(entry.job.id) !== entry) return;
    this.running.delete(entry.job.id);
    this.processed++;
    if (this.running.size === 0) this.allFinished?.resolve();
    this.fillSlotsInTurn();
    this.slotFreed.resolve();
  }

  /** Something in the worker's own handling of an attempt threw: logged, and the slot is freed. */
  private unhandled(entry: Running, error: unknown): void {
    this.options.logger.error("an attempt ended without its outcome being handled", { error, job_id: entry.job.id });
    this.finish(entry);
  }

  /**
   * Starts one attempt. Written with callbacks rather than async/await: a no-op job's cost is mostly the
   * promises around it, and each promise also pays the context tracking of AsyncLocalStorage.
   */
  private runOne(entry: Running): void {
    const { job, cancellation } = entry;
    const { backend, logger, observer } = this.options;
    observer?.claimed(job, Date.now());
    const definition = this.options.lookup(job.task);
    if (!definition) {
      const error: AttemptError = {
        attempt: job.attempts,
        at: new Date().toISOString(),
        class: "UnknownTask",
        message: `no task named "${job.task}" is registered in this service; it was dead-lettered without retrying`,
        reason: "unknown task",
      };
      this.settle(entry, () => backend.kill({ workerId: this.id, job, error }));
      observer?.finished(job, "dead", 0);
      logger.error("unknown task dead-lettered", { job_id: job.id, task: job.task });
      // Not from inside the fillSlots loop that launched it: a buffer of unknown tasks would recurse.
      queueMicrotask(() => this.finish(entry));
      return;
    }
    const timeoutMs = job.timeoutMs ?? definition.options.timeoutMs ?? null;
    let timer: NodeJS.Timeout | undefined;
    if (timeoutMs !== null) {
      timer = setTimeout(
        () => cancellation.abort(new JobTimeoutError(`"${job.task}" ran past its timeout of ${timeoutMs} ms`)),
        timeoutMs,
      );
    }
    const startedAt = performance.now();
    let work: Promise<unknown>;
    try {
      work = withJob(job, () => this.options.execute(definition, job, cancellation));
    } catch (error) {
      work = Promise.reject(error);
    }
    cancellation.whenSettled(
      work,
      (value) => this.succeeded(entry, timer, startedAt, value),
      (error) => this.failed(entry, definition, timer, startedAt, error),
    );
  }

  private succeeded(entry: Running, timer: NodeJS.Timeout | undefined, startedAt: number, value: unknown): void {
    try {
      clearTimeout(timer);
      const durationMs = performance.now() - startedAt;
      const { job } = entry;
      if (value instanceof Snooze) {
        this.snoozed(entry, value);
        this.finish(entry);
        return;
      }
      this.settle(entry, () => this.options.backend.complete({ workerId: this.id, job }));
      if (!entry.cancelled) this.options.observer?.finished(job, "ok", durationMs);
      this.finish(entry);
    } catch (error) {
      this.unhandled(entry, error);
    }
  }

  private failed(entry: Running, definition: TaskDefinition, timer: NodeJS.Timeout | undefined, startedAt: number, error: unknown): void {
    try {
      clearTimeout(timer);
      if (!entry.cancelled) this.recordFailure(entry, definition, performance.now() - startedAt, error);
      this.finish(entry);
    } catch (unexpected) {
      this.unhandled(entry, unexpected);
    }
  }

  /**
   * The handler returned snooze(ms): the job comes back after ms with its attempt given back, unless it has
   * snoozed max_snoozes times already; the backend checks that against its own count, atomically.
   */
  private snoozed(entry: Running, value: Snooze): void {
    if (entry.cancelled) return;
    const { job } = entry;
    const { backend, logger } = this.options;
    const maxSnoozes = this.options.maxSnoozes ?? 100;
    const availableAt = new Date(Date.now() + value.ms);
    const error: AttemptError = {
      attempt: job.attempts,
      at: new Date().toISOString(),
      class: "SnoozeLimit",
      message: `"${job.task}" snoozed ${maxSnoozes} times, the most [plugin.queue] max_snoozes allows; it was dead-lettered`,
      reason: TOO_MANY_SNOOZES,
    };
    this.settle(entry, async () => {
      const { snoozed } = await backend.snooze({ workerId: this.id, job, availableAt, maxSnoozes });
      if (snoozed) return;
      // Refused: the limit was reached, or the job is no longer this worker's (then kill changes nothing either).
      await backend.kill({ workerId: this.id, job, error });
      withJob(job, () => logger.error("job snoozed too often; dead-lettered", { max_snoozes: maxSnoozes }));
    });
  }

  private recordFailure(entry: Running, definition: TaskDefinition, durationMs: number, error: unknown): void {
    const { job } = entry;
    const { backend, logger, observer } = this.options;
    const maxAttempts = job.maxAttempts ?? definition.options.maxAttempts ?? this.options.defaultMaxAttempts;
    const attempt = errorToAttempt(error, job.attempts, error instanceof JobTimeoutError ? "timeout" : undefined);
    if (error instanceof PermanentError) {
      this.settle(entry, () => backend.kill({ workerId: this.id, job, error: attempt }));
      observer?.finished(job, "dead", durationMs);
      withJob(job, () => logger.error("job failed permanently (PermanentError); dead-lettered without a retry", { error }));
    } else if (job.attempts >= maxAttempts) {
      this.settle(entry, () => backend.kill({ workerId: this.id, job, error: attempt }));
      observer?.finished(job, "dead", durationMs);
      withJob(job, () => logger.error("job failed for the last time; dead-lettered", { error, max_attempts: maxAttempts }));
    } else {
      const baseMs = definition.options.backoffBaseMs ?? this.options.backoffBaseMs;
      const availableAt = new Date(Date.now() + backoffDelayMs(job.attempts, { baseMs }));
      this.settle(entry, () => backend.retry({ workerId: this.id, job, error: attempt, availableAt }));
      observer?.finished(job, "retry", durationMs);
      withJob(job, () => logger.warn("job failed; will retry", { error, retry_at: availableAt.toISOString() }));
    }
  }

  /**
   * Hands an outcome to the backend without holding the slot: the next job starts while this one's outcome
   * is written (PostgreSQL batches them). Until it is written the job stays leased, so a crash in between
   * only means it runs again. Shutdown waits for every outcome in flight. An unreachable backend is tried
   * again while the lease surely holds (write-outcome-again.ts): the heartbeat last pushed it at most a third of the
   * lease before the attempt ended, so for two thirds of the lease from now, or until shutdown's grace is over.
   */
  private settle(entry: Running, record: () => Promise<void>): void {
    if (entry.cancelled) return;
    const leaseHoldsUntil = Date.now() + (this.options.leaseMs * 2) / 3;
    const written: Promise<void> = record().then(
      () => {
        this.outcomes.delete(written);
      },
      (error: unknown) =>
        writeOutcomeAgain({
          firstError: error,
          write: record,
          jobId: entry.job.id,
          until: () => Math.min(leaseHoldsUntil, this.graceEndsAt),
          stopNow: this.stopNowSignal,
          logger: this.options.logger,
        }).finally(() => this.outcomes.delete(written)),
    );
    this.outcomes.add(written);
  }

  private beatOnce(): Promise<void> {
    this.beating ??= this.extendLeases().finally(() => {
      this.beating = null;
      if (this.localBeat) this.localBeat.lastBeatAt = performance.now();
    });
    return this.beating;
  }

  private async extendLeases(): Promise<void> {
    const ids = [
      ...[...this.running.values()].filter((r) => !r.cancelled).map((r) => r.job.id),
      ...this.buffer.map((job) => job.id),
    ];
    if (ids.length === 0) {
      this.backstop?.beat(ids);
      return;
    }
    try {
      const { cancelled } = await this.options.backend.extendLeases({ workerId: this.id, jobIds: ids, leaseMs: this.options.leaseMs });
      this.backstop?.beat(ids.filter((id) => !cancelled.includes(id)));
      if (cancelled.length > 0) this.cancelJobs(cancelled);
    } catch (error) {
      this.options.logger.warn("heartbeat failed", { error });
    }
  }

  /**
   * Jobs cancelled through the queue while this worker held them (the backend holds them cancelled already):
   * a running one's signal is aborted with reason "cancelled" and its outcome ignored; a buffered one is dropped.
   */
  private cancelJobs(ids: string[]): void {
    const cancelled = new Set(ids);
    const kept = this.buffer.filter((job) => !cancelled.has(job.id));
    if (kept.length < this.buffer.length) this.buffer.splice(0, this.buffer.length, ...kept);
    for (const id of ids) {
      const entry = this.running.get(id);
      if (!entry || entry.cancelled) continue;
      entry.cancelled = true;
      withJob(entry.job, () => this.options.logger.info("job cancelled while running; its handler's signal is aborted"));
      entry.cancellation.abort(CANCELLED);
    }
  }
}
