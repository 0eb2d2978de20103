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

/**
 * Per-key concurrency (docs/flow-control.md#per-key-concurrency): at most `limit` jobs with one key run at once.
 * The key is computed when a job is enqueued and stored with it (`Job.limitKey`).
 */
export interface KeyedConcurrency<P = unknown> {
  key(payload: P, job: { id: string; task: string; tenantId: string | null }): string;
  limit: number;
}

/** Per-key rate limit (docs/flow-control.md#per-key-rate-limits): at most `max` starts per key in any `perMs`. */
export interface KeyedRateLimit<P = unknown> extends RateLimit {
  key(payload: P, job: { id: string; task: string; tenantId: string | null }): string;
}

/** What a dead job of a task with `orderedBy` does to its key's next jobs (docs/flow-control.md#order-per-key). */
export type OnDead = "block" | "skip";

/**
 * Fair share across keys (docs/flow-control.md#fair-share-across-keys): due jobs are claimed round robin across
 * keys, a key of weight w getting w turns to another's one. "tenant": the job's tenant is its key.
 */
export type Fairness<P = unknown> =
  | "tenant"
  | {
      /** The key of a job (default: its tenant). */
      key?(payload: P, job: { id: string; task: string; tenantId: string | null }): string;
      /** Turns per round of a key (default 1), e.g. `{ acme: 2 }`. */
      weights?: Readonly<Record<string, number>>;
    };

/** A task's limits as a backend enforces them; null: no such limit. */
export interface TaskLimits {
  /** With `perKey`, the limit of each key; else of the whole task. */
  concurrency: number | null;
  rateLimit: RateLimit | null;
  /** True: `concurrency` holds per job key (Job.limitKey), not for the whole task. */
  perKey?: boolean;
  /** Present: at most `max` starts per job key in any `perMs` (beside `rateLimit`, which holds for the task). */
  keyRate?: RateLimit;
  /**
   * Present: one job of a key runs at a time, in enqueue order, a failing job holding its key's next ones until it
   * completes or dies; `onDead` says whether a dead one keeps holding them ("block") or not ("skip").
   */
  ordered?: { onDead: OnDead };
  /**
   * Present: the task's jobs carry a key (Job.limitKey) and keys take turns in the claim (round robin, weighted);
   * keys absent from `weights` weigh 1.
   */
  fair?: { weights: Readonly<Record<string, number>> };
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
export function normalizeLimits(
  options: { concurrency?: unknown; rateLimit?: unknown; fairness?: unknown; orderedBy?: unknown; onDead?: unknown },
  what: string,
): TaskLimits | null {
  const { rateLimit } = options;
  let concurrency = options.concurrency;
  let perKey = false;
  if (concurrency !== null && typeof concurrency === "object") {
    const c = concurrency as Partial<KeyedConcurrency>;
    if (typeof c.key !== "function" || !positiveInteger(c.limit)) {
      throw new TypeError(`${what}: concurrency must be a number, or { key, limit } with key a function of the payload that returns the key and limit a positive whole number, e.g. { key: (p) => p.customerId, limit: 2 } (jfast docs flow-control#per-key-concurrency)`);
    }
    concurrency = c.limit;
    perKey = true;
  }
  if (concurrency !== undefined && !positiveInteger(concurrency)) {
    throw new TypeError(`${what}: concurrency must be a positive whole number (at most that many of its jobs run at once across every worker), got ${String(concurrency)} (jfast docs tasks#limits)`);
  }
  let rate: RateLimit | null = null;
  let keyRate: RateLimit | null = null;
  if (rateLimit !== undefined) {
    const r = rateLimit as Partial<KeyedRateLimit> | null;
    if (r === null || typeof r !== "object" || !positiveInteger(r.max) || !positiveInteger(r.perMs) || (r.key !== undefined && typeof r.key !== "function")) {
      throw new TypeError(`${what}: rateLimit must be { max, perMs } with two positive whole numbers, e.g. { max: 10, perMs: 1000 } for ten starts a second, with an optional key function for a limit per key (jfast docs tasks#limits)`);
    }
    if (r.key === undefined) rate = { max: r.max, perMs: r.perMs };
    else keyRate = { max: r.max, perMs: r.perMs };
  }
  const fair = normalizeFairness(options.fairness, what);
  if (options.orderedBy !== undefined && typeof options.orderedBy !== "function") {
    throw new TypeError(`${what}: orderedBy must be a function of the payload that returns the key its jobs run in order by, e.g. (p) => p.accountId (jfast docs flow-control#order-per-key)`);
  }
  if (options.onDead !== undefined && options.onDead !== "block" && options.onDead !== "skip") {
    throw new TypeError(`${what}: onDead must be "block" (a dead job holds its key's next jobs until it is retried or skipped) or "skip", got ${JSON.stringify(options.onDead)} (jfast docs flow-control#order-per-key)`);
  }
  if (options.onDead !== undefined && options.orderedBy === undefined) {
    throw new TypeError(`${what}: onDead goes with orderedBy (what a dead job does to the jobs after it with its key) (jfast docs flow-control#order-per-key)`);
  }
  const ordered = options.orderedBy === undefined ? null : { onDead: (options.onDead ?? "block") as OnDead };
  if (ordered && (fair || keyRate)) {
    throw new TypeError(`${what}: orderedBy runs one job of a key at a time, in order: it does not combine with fairness or a per-key rate limit (jfast docs flow-control#order-per-key)`);
  }
  const keyFunctions = [perKey, keyRate !== null, ordered !== null, typeof (options.fairness as { key?: unknown } | undefined)?.key === "function"].filter(Boolean).length;
  if (keyFunctions > 1) {
    throw new TypeError(`${what}: a task's jobs have one key: give \`key\` to only one of concurrency, rateLimit and fairness, or use orderedBy alone (the others then hold per that key) (jfast docs flow-control)`);
  }
  if (concurrency === undefined && rate === null && keyRate === null && fair === null && ordered === null) return null;
  const limits: TaskLimits = { concurrency: (concurrency as number | undefined) ?? null, rateLimit: rate };
  if (perKey) limits.perKey = true;
  if (keyRate) limits.keyRate = keyRate;
  if (fair) limits.fair = fair;
  if (ordered) limits.ordered = ordered;
  return limits;
}

const WEIGHT_MAX = 1000;

function normalizeFairness(fairness: unknown, what: string): { weights: Record<string, number> } | null {
  if (fairness === undefined) return null;
  const problem = `${what}: fairness must be "tenant" or { key?, weights? } with key a function of the payload that returns the key and weights whole numbers from 1 to ${WEIGHT_MAX}, e.g. { weights: { acme: 2 } } (jfast docs flow-control#fair-share-across-keys)`;
  if (fairness === "tenant") return { weights: {} };
  if (fairness === null || typeof fairness !== "object") throw new TypeError(problem);
  const f = fairness as { key?: unknown; weights?: unknown };
  if (f.key !== undefined && typeof f.key !== "function") throw new TypeError(problem);
  const weights: Record<string, number> = {};
  if (f.weights !== undefined) {
    if (f.weights === null || typeof f.weights !== "object") throw new TypeError(problem);
    for (const [key, weight] of Object.entries(f.weights)) {
      if (!Number.isInteger(weight) || (weight as number) < 1 || (weight as number) > WEIGHT_MAX) throw new TypeError(problem);
      weights[key] = weight as number;
    }
  }
  return { weights };
}

/** The limits of the given tasks that have one (each task's options already checked when it was declared). */
export function limitsOf(tasks: Iterable<{ name: string; options: KeyOptions }>): Map<string, TaskLimits> {
  const limits = new Map<string, TaskLimits>();
  for (const task of tasks) {
    const found = normalizeLimits(task.options, `task("${task.name}")`);
    if (found) limits.set(task.name, found);
  }
  return limits;
}

/** True when the task's jobs carry a key the claim walks: per-key concurrency or fairness. */
export function isKeyed(limits: TaskLimits): boolean {
  return limits.perKey === true || limits.fair !== undefined || limits.keyRate !== undefined || limits.ordered !== undefined;
}

/**
 * True when a claim counts the task's starts (a concurrency, a rate limit, order per key), so its jobs are claimed
 * only for a worker's free slots. A task with fairness alone counts nothing: its keys' turns are taken at claim, and
 * its jobs may wait in a worker's buffer like any other (docs/flow-control.md#fair-share-across-keys).
 */
export function countsAtClaim(limits: TaskLimits): boolean {
  return limits.fair === undefined || limits.concurrency !== null || limits.rateLimit !== null || !isFairAlone(limits);
}

/** True when fairness is the task's only per-key option (no per-key concurrency, order or per-key rate limit). */
export function isFairAlone(limits: TaskLimits): boolean {
  return limits.fair !== undefined && limits.perKey !== true && limits.ordered === undefined && limits.keyRate === undefined;
}

/** A task's options that give its jobs a key (docs/flow-control.md). */
export interface KeyOptions {
  concurrency?: number | KeyedConcurrency<never>;
  rateLimit?: RateLimit | KeyedRateLimit<never>;
  fairness?: Fairness<never>;
  orderedBy?(payload: never): string;
  onDead?: OnDead;
}

/** True when a task's jobs get a key at enqueue (limitKeyOf). */
export function hasKeyOption(options: KeyOptions): boolean {
  return typeof options.concurrency === "object" || options.fairness !== undefined || options.orderedBy !== undefined || (options.rateLimit !== undefined && "key" in options.rateLimit);
}

/** The longest key a job keeps for its limits (longer keys are refused at enqueue). */
export const LIMIT_KEY_MAX = 512;

/**
 * The key of a job of a task with `concurrency: { key, limit }` or `fairness`, computed at enqueue
 * (QueueProvider.prepare); null when the task has neither. With both, the concurrency key is the one keys take
 * turns by. A job without a tenant under `fairness: "tenant"` has the empty key.
 */
export function limitKeyOf(
  options: KeyOptions,
  job: { id: string; task: string; tenantId: string | null; payload: unknown },
): string | null {
  const { concurrency, rateLimit, fairness } = options;
  const fn: ((payload: never, job: { id: string; task: string; tenantId: string | null }) => unknown) | undefined =
    typeof concurrency === "object"
      ? (concurrency as KeyedConcurrency).key
      : ((rateLimit as Partial<KeyedRateLimit> | undefined)?.key ?? options.orderedBy ?? (typeof fairness === "object" ? (fairness as { key?: KeyedConcurrency["key"] }).key : undefined));
  if (fn === undefined) return fairness === undefined ? null : (job.tenantId ?? "");
  const key: unknown = fn(job.payload as never, { id: job.id, task: job.task, tenantId: job.tenantId });
  if (typeof key !== "string" || key.length === 0 || key.length > LIMIT_KEY_MAX) {
    throw new TypeError(`task("${job.task}") ${typeof concurrency === "object" ? "concurrency.key" : (rateLimit as Partial<KeyedRateLimit> | undefined)?.key ? "rateLimit.key" : options.orderedBy ? "orderedBy" : "fairness.key"}(payload) must return a non-empty string of at most ${LIMIT_KEY_MAX} characters, got ${typeof key === "string" ? `${key.length} characters` : String(key)} (jfast docs flow-control#per-key-concurrency)`);
  }
  return key;
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
