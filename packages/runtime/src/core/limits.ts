/**
 * Per-task limits (docs/tasks.md#limits), held across every process of a queue:
 *  - `concurrency: n`: at most n jobs of the task running at once;
 *  - `rateLimit: { max, perMs }`: at most max starts of its jobs in any span of perMs milliseconds (a sliding window).
 * A job over a limit stays waiting: its attempt is not spent, and jobs of other tasks are claimed past it.
 */
export interface RateLimit {
  /** Starts allowed in any window of `perMs`. */
  max: number;
  perMs: number;
}

/** A task's limits as a backend enforces them; null: no such limit. */
export interface TaskLimits {
  concurrency: number | null;
  rateLimit: RateLimit | null;
}

/** Task name → its limits: only the tasks of the queue that have one. */
export type LimitMap = ReadonlyMap<string, TaskLimits>;

/** How much of its limits a task uses now. */
export interface LimitUsage {
  /** Jobs of the task running under a live lease that hold a slot. */
  running: number;
  /** Starts of the task's jobs within its rate window, ending now. */
  startedInWindow: number;
}

/** The largest value a limit takes (stored in integer columns and Lua numbers). */
const LIMIT_MAX = 2_147_483_647;

function positiveInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= LIMIT_MAX;
}

/**
 * Checks a task's `concurrency` and `rateLimit` options and gives the limits a backend enforces (null: none).
 * `what` names the declaration in errors: `task("billing.charge")`.
 */
export function normalizeLimits(options: { concurrency?: unknown; rateLimit?: unknown }, what: string): TaskLimits | null {
  const { concurrency, rateLimit } = options;
  if (concurrency !== undefined && !positiveInteger(concurrency)) {
    throw new TypeError(`${what}: concurrency must be a positive whole number (at most that many of its jobs run at once across every worker), got ${String(concurrency)} (jfast docs tasks#limits)`);
  }
  let rate: RateLimit | null = null;
  if (rateLimit !== undefined) {
    const r = rateLimit as Partial<RateLimit> | null;
    if (r === null || typeof r !== "object" || !positiveInteger(r.max) || !positiveInteger(r.perMs)) {
      throw new TypeError(`${what}: rateLimit must be { max, perMs } with two positive whole numbers, e.g. { max: 10, perMs: 1000 } for ten starts a second (jfast docs tasks#limits)`);
    }
    rate = { max: r.max, perMs: r.perMs };
  }
  if (concurrency === undefined && rate === null) return null;
  return { concurrency: concurrency ?? null, rateLimit: rate };
}

/** The limits of the given tasks that have one (each task's options already checked when it was declared). */
export function limitsOf(tasks: Iterable<{ name: string; options: { concurrency?: number; rateLimit?: RateLimit } }>): Map<string, TaskLimits> {
  const limits = new Map<string, TaskLimits>();
  for (const task of tasks) {
    const found = normalizeLimits(task.options, `task("${task.name}")`);
    if (found) limits.set(task.name, found);
  }
  return limits;
}

/**
 * What a waiting job of a limited task waits on, in words ("concurrency 5 of billing.charge: 5 running"); null when
 * neither limit is reached now (the job waits for its turn or its time only).
 */
export function describeLimitWait(task: string, limits: TaskLimits, usage: LimitUsage): string | null {
  const parts: string[] = [];
  if (limits.concurrency !== null && usage.running >= limits.concurrency) {
    parts.push(`concurrency ${limits.concurrency} of ${task}: ${usage.running} running`);
  }
  if (limits.rateLimit !== null && usage.startedInWindow >= limits.rateLimit.max) {
    parts.push(`rate limit ${limits.rateLimit.max} per ${limits.rateLimit.perMs} ms of ${task}: ${usage.startedInWindow} started in the window`);
  }
  return parts.length > 0 ? parts.join("; ") : null;
}

/**
 * A sliding window's start times, oldest first, for one process (the memory queue): `room` is how many more may
 * start now, `nextAt` when one more may (epoch ms; null when there is room).
 */
export class StartWindow {
  private times: number[] = [];

  constructor(private readonly rate: RateLimit) {}

  room(now: number): number {
    this.trim(now);
    return Math.max(0, this.rate.max - this.times.length);
  }

  nextAt(now: number): number | null {
    this.trim(now);
    return this.times.length < this.rate.max ? null : this.times[this.times.length - this.rate.max]! + this.rate.perMs;
  }

  add(now: number): void {
    this.times.push(now);
  }

  private trim(now: number): void {
    let drop = 0;
    while (drop < this.times.length && this.times[drop]! <= now - this.rate.perMs) drop++;
    if (drop > 0) this.times = this.times.slice(drop);
  }
}
