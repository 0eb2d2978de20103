import type { AttemptError, Job } from "./job.js";

/**
 * What happens to a job, as this process sees it (docs/observability.md#job-events). Emitted once, where it happens: the queue
 * provider for `enqueued`, the worker's attempt (worker/attempts.ts) for the rest. Metrics, the throughput
 * history and a service's own listeners (`jfast.on`) all subscribe; nobody patches the providers they watch.
 *
 * One attempt gives, in order: `claimed`, `started`, then one of `completed`, `failed` (followed by `dead` when
 * it will not be retried), `snoozed` or `cancelled`; a job the worker gives back at shutdown is `released`.
 * A job of a task this process does not know is `claimed` then `dead`, never `started`.
 */
export interface JobEventMap {
  /** The queue holds the job (`queue.enqueue`, a scheduler tick, the relay delivering an outbox job). */
  "job:enqueued": { job: Job; queue: string; duplicate: boolean };
  /** A worker holds the job's lease. `claimedAt` is epoch ms; its pickup latency is `claimedAt - job.availableAt`. */
  "job:claimed": { job: Job; queue: string; workerId: string; claimedAt: number };
  /** The handler (with its middleware) is called now. */
  "job:started": { job: Job; queue: string; workerId: string };
  /** The attempt returned `value`; the job is done. */
  "job:completed": { job: Job; queue: string; workerId: string; value: unknown; durationMs: number };
  /** The attempt threw `error`. `retryAt`: when the next attempt may run, null when there is none (`dead` follows). */
  "job:failed": { job: Job; queue: string; workerId: string; error: unknown; attemptError: AttemptError; retryAt: Date | null; durationMs: number };
  /** The job is a dead letter: its attempts are spent, its error is permanent, or its task is unknown here. */
  "job:dead": { job: Job; queue: string; workerId: string; attemptError: AttemptError; reason: DeadReason; durationMs: number };
  /** The handler returned `snooze(ms)`: the job runs again at `until`, the attempt not counted. */
  "job:snoozed": { job: Job; queue: string; workerId: string; until: Date; durationMs: number };
  /** The job was cancelled through the queue while its handler ran; the handler's signal was aborted. */
  "job:cancelled": { job: Job; queue: string; workerId: string };
  /** The worker gave the job back at shutdown, attempt not spent: `started` false for one claimed ahead, never run. */
  "job:released": { job: Job; queue: string; workerId: string; started: boolean };
  /** Claimed after its deadline (docs/flow-control.md#deadlines): ended `expired` without running, attempt not spent. */
  "job:expired": { job: Job; queue: string; workerId: string; attemptError: AttemptError };
}

export type JobEventName = keyof JobEventMap;
export type DeadReason = "unknown task" | "permanent" | "exhausted";

/** A listener's return value is ignored; a promise it returns that rejects is reported like a throw. */
export type JobEventListener<E extends JobEventName> = (event: JobEventMap[E]) => void | Promise<void>;

/** How an attempt ended, for counters (/metrics, the throughput history): `retry` and `dead` are failures. */
export const AttemptOutcome = { ok: "ok", retry: "retry", dead: "dead" } as const;
export type AttemptOutcome = (typeof AttemptOutcome)[keyof typeof AttemptOutcome];

type Listeners = { [E in JobEventName]?: JobEventListener<E>[] };

/**
 * The job events of one app. `has(name)` is a property read: emitters check it before building an event, so an
 * event nobody listens to costs nothing. Listeners run synchronously, in the order they were added; one that
 * throws is reported to `onListenerError` and the others still run (a listener never fails a job).
 */
export class JobEvents {
  private listeners: Listeners = {};
  /** `job:enqueued` events whose write is in flight, by job id (enqueueing). */
  private unannounced: Map<string, JobEventMap["job:enqueued"]> | null = null;

  constructor(private readonly onListenerError: (error: unknown, name: JobEventName) => void) {}

  on<E extends JobEventName>(name: E, listener: JobEventListener<E>): () => void {
    // Copied, not pushed: an emit in progress keeps iterating the array it started with.
    const current = (this.listeners[name] ?? []) as JobEventListener<E>[];
    this.listeners = { ...this.listeners, [name]: [...current, listener] };
    return () => this.off(name, listener);
  }

  off<E extends JobEventName>(name: E, listener: JobEventListener<E>): void {
    const current = this.listeners[name] as JobEventListener<E>[] | undefined;
    if (!current?.includes(listener)) return;
    const kept = current.filter((l) => l !== listener);
    // Undefined, not empty, when none is left: that is what has() reads.
    this.listeners = { ...this.listeners, [name]: kept.length > 0 ? kept : undefined };
  }

  /**
   * Holds `job:enqueued` for `events` until `settle`. A backend that hands jobs over in process (PostgreSQL, Redis)
   * may deliver one to a worker of this process, which claims and even runs it, before the enqueue's caller hears
   * back: the first other event of such a job emits its `job:enqueued` first (duplicate false: a handed-over job is
   * one the write inserted), so a listener always hears `enqueued` before `claimed`.
   */
  enqueueing(events: JobEventMap["job:enqueued"][]): PendingEnqueued {
    const unannounced = (this.unannounced ??= new Map());
    for (const event of events) unannounced.set(event.job.id, event);
    return {
      settle: (duplicates) =>
        events.forEach((event, i) => {
          if (this.takeUnannounced(event.job.id, event) === undefined) return;
          event.duplicate = duplicates(i);
          this.emit("job:enqueued", event);
        }),
      abandon: () => events.forEach((event) => this.takeUnannounced(event.job.id, event)),
    };
  }

  private announceEarly(id: string): void {
    const event = this.takeUnannounced(id);
    if (event !== undefined) this.emit("job:enqueued", event);
  }

  /** The held `job:enqueued` of job `id` (only if it is `expected`, when given), no longer held; else undefined. */
  private takeUnannounced(id: string, expected?: JobEventMap["job:enqueued"]): JobEventMap["job:enqueued"] | undefined {
    const event = this.unannounced?.get(id);
    if (event === undefined || (expected !== undefined && event !== expected)) return undefined;
    this.unannounced!.delete(id);
    if (this.unannounced!.size === 0) this.unannounced = null;
    return event;
  }

  has(name: JobEventName): boolean {
    return this.listeners[name] !== undefined;
  }

  emit<E extends JobEventName>(name: E, event: JobEventMap[E]): void {
    if (this.unannounced !== null && name !== "job:enqueued") this.announceEarly(event.job.id);
    const listeners = this.listeners[name] as JobEventListener<E>[] | undefined;
    if (!listeners) return;
    for (const listener of listeners) {
      try {
        const result = listener(event);
        if (result !== undefined) Promise.resolve(result).catch((error: unknown) => this.onListenerError(error, name));
      } catch (error) {
        this.onListenerError(error, name);
      }
    }
  }
}

/**
 * `job:enqueued` for jobs whose write is in flight (JobEvents.enqueueing): `settle` emits those not yet announced,
 * with the backend's answer; `abandon` forgets them (the write failed).
 */
export interface PendingEnqueued {
  settle(duplicates: (index: number) => boolean): void;
  abandon(): void;
}

/**
 * Calls `ended` once per attempt that completed, failed to be retried, or went dead: what counters count. It gets
 * the event itself (no object more per attempt) and the outcome.
 */
export function onAttemptEnded(
  events: JobEvents,
  ended: (attempt: { job: Job; queue: string; durationMs: number }, outcome: AttemptOutcome) => void,
): () => void {
  const off = [
    events.on("job:completed", (e) => ended(e, AttemptOutcome.ok)),
    events.on("job:failed", (e) => {
      if (e.retryAt) ended(e, AttemptOutcome.retry);
    }),
    events.on("job:dead", (e) => ended(e, AttemptOutcome.dead)),
  ];
  return () => off.forEach((unsubscribe) => unsubscribe());
}
