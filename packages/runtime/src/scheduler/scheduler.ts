import type { Logger } from "../observability/logger.js";
import { createSchedule, type Schedule } from "./schedule.js";
import type { ScheduleControl } from "./schedule-control.js";
import type { ScheduleStore, StoredSchedule } from "./stores/schedule-store.js";
import { tickJob } from "./tick-job.js";
import { describeTrigger, nextTick, previousTick } from "./trigger.js";

/** How often the scheduler measures its clock against the store's. */
const CLOCK_SYNC_MS = 10_000;
/** A difference from the store's clock worth a warning (NTP keeps hosts within milliseconds). */
const SKEW_WARN_MS = 2_000;

/** Time as the scheduler sees it; tests drive a fake one. */
export interface SchedulerClock {
  now(): number;
  /** Resolves after `ms`, or at once when `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const systemClock: SchedulerClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const timer = setTimeout(done, Math.max(0, ms));
      function done() {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      }
      signal.addEventListener("abort", done, { once: true });
    }),
};

export interface SchedulerOptions {
  schedules: Schedule[];
  store: ScheduleStore;
  logger: Logger;
  clock?: SchedulerClock;
  /** A tick first seen later than this after its time was missed: `catchUp: false` skips it. */
  missedAfterMs?: number;
  /** Longest sleep between passes, so a replica notices claims made elsewhere and clock changes. */
  maxSleepMs?: number;
  /** Wait before retrying after the store failed. */
  retryMs?: number;
  /** Claims older than this are pruned (each schedule's last is always kept). */
  retentionMs?: number;
  pruneEveryMs?: number;
  /**
   * How often a sleeping scheduler reads the stored schedules, so a schedule made, edited, paused or deleted by
   * another process is seen within this long (docs/scheduler.md#at-run-time). One small read, nothing else.
   */
  pollMs?: number;
}

export interface ScheduleStatus {
  name: string;
  task: string;
  /** "code": declared in a tasks file (pause, resume, trigger); "runtime": made through the admin API or CLI. */
  origin: "code" | "runtime";
  paused: boolean;
  payload: Record<string, unknown>;
  /** Who last changed it at run time (the audit trail has the details); null when never changed. */
  updatedBy: string | null;
  updatedAt: string | null;
  cron?: string;
  timezone?: string;
  everyMs?: number;
  catchUp: boolean;
  /** ISO-8601 UTC; null when the expression has no more ticks. */
  nextTick: string | null;
  /** The last tick claimed by any replica, as last read from the store. */
  lastTick: string | null;
  lastError: { message: string; at: string } | null;
}

export interface SchedulerStatus {
  status: "ok" | "degraded";
  running: boolean;
  store: ScheduleStore["kind"];
  schedules: ScheduleStatus[];
  lastError: { message: string; at: string; schedule?: string } | null;
  reason?: string;
}

interface State {
  lastTick: number | null;
  nextTick: number | null;
  lastError: { message: string; at: string } | null;
  /** The tick this process last reported as skipped, so each skip is logged once. */
  skipped: number | null;
  /** The latest tick at or before the last pass; with `nextTick` it brackets the time of that pass. */
  recent: number | null;
}

/** A schedule this process runs: declared in code, or read from the store. */
interface Entry {
  schedule: Schedule;
  origin: "code" | "runtime";
  paused: boolean;
  /** Ticks at or before this never fire (StoredSchedule.since); null for a declared schedule never changed. */
  since: number | null;
  updatedAt: number | null;
  updatedBy: string | null;
}

/**
 * The leaderless scheduler: every process runs one. Each pass reads the last claimed tick of every
 * schedule, works out the tick that is due now, and tries to claim it; the store lets exactly one claim
 * of a tick win, and only the winner enqueues. Between passes it sleeps until the earliest next tick.
 *
 * Due ticks: after downtime only the most recent missed tick fires (older ones are skipped, never a
 * burst), and not even that one with `catchUp: false`. A schedule with no claim in the store is new: its
 * first tick is the first one after this process started.
 */
export class Scheduler {
  readonly store: ScheduleStore;
  /** Changes at run time (admin API, CLI); set where the scheduler is started with the app's registry and queue. */
  control: ScheduleControl | null = null;
  private readonly declared: Schedule[];
  private entries: Entry[];
  /** Stored schedules as last read, by name: the JSON they were read as, and what it parsed to (or why it did not). */
  private readonly parsed = new Map<string, { json: string; schedule: Schedule | null }>();
  private storedJson = "[]";
  private readonly logger: Logger;
  private readonly clock: SchedulerClock;
  private readonly missedAfterMs: number;
  private readonly maxSleepMs: number;
  private readonly retryMs: number;
  private readonly retentionMs: number;
  private readonly pruneEveryMs: number;
  private readonly pollMs: number;
  private wake: AbortController | null = null;
  private readonly states = new Map<string, State>();
  private startedAt: number;
  private lastPrune = 0;
  private lastError: SchedulerStatus["lastError"] = null;
  private failing = false;
  private abort: AbortController | null = null;
  private loop: Promise<void> | null = null;
  /** The store's clock minus this process's (ms), measured at most every CLOCK_SYNC_MS; 0 until measured. */
  private offset = 0;
  private offsetReadAt: number | null = null;
  private warnedSkew = false;

  constructor(options: SchedulerOptions) {
    this.declared = options.schedules;
    this.entries = this.declared.map((schedule) => ({ schedule, origin: "code", paused: false, since: null, updatedAt: null, updatedBy: null }));
    this.store = options.store;
    this.logger = options.logger;
    this.clock = options.clock ?? systemClock;
    this.missedAfterMs = options.missedAfterMs ?? 60_000;
    this.maxSleepMs = options.maxSleepMs ?? 60_000;
    this.retryMs = options.retryMs ?? 5_000;
    this.retentionMs = options.retentionMs ?? 7 * 86_400_000;
    this.pruneEveryMs = options.pruneEveryMs ?? 3_600_000;
    this.pollMs = options.pollMs ?? 1000;
    this.startedAt = this.now();
    for (const schedule of this.declared) this.stateOf(schedule);
  }

  /** Schedules declared in code: they can be paused, resumed and triggered, not edited or deleted. */
  get declaredSchedules(): readonly Schedule[] {
    return this.declared;
  }

  private declaredSchedule(name: string): Schedule | undefined {
    return this.declared.find((s) => s.name === name);
  }

  /** Now by the store's clock, for changes that say since when they hold. */
  storeNow(): number {
    return this.now();
  }

  /** A change was stored by this process: read the store and pass now instead of at the next poll. */
  changed(): void {
    this.wake?.abort();
  }

  private stateOf(schedule: Schedule): State {
    let state = this.states.get(schedule.name);
    if (!state) {
      // nextTick is known before the first pass so that /ready can show it at once.
      state = { lastTick: null, nextTick: nextTick(schedule.trigger, this.now()), lastError: null, skipped: null, recent: null };
      this.states.set(schedule.name, state);
    }
    return state;
  }

  /**
   * Reads the stored schedules and rebuilds what this process runs. True when they changed since the last read.
   * A stored schedule that no longer parses (its task was renamed in a deploy, say) is left out and logged once.
   */
  private async readStored(): Promise<boolean> {
    const stored = await this.store.schedules();
    stored.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const json = JSON.stringify(stored);
    if (json === this.storedJson) return false;
    this.storedJson = json;
    const byName = new Map(stored.map((s) => [s.name, s]));
    const entries: Entry[] = this.declared.map((schedule) => {
      const state = byName.get(schedule.name);
      return {
        schedule,
        origin: "code",
        paused: state?.paused ?? false,
        since: state?.since ?? null,
        updatedAt: state?.updatedAt ?? null,
        updatedBy: state?.updatedBy ?? null,
      };
    });
    for (const record of stored) {
      if (record.spec === null || this.declaredSchedule(record.name)) continue;
      const schedule = this.parseStored(record);
      if (schedule) entries.push({ schedule, origin: "runtime", paused: record.paused, since: record.since, updatedAt: record.updatedAt, updatedBy: record.updatedBy });
    }
    const names = new Set(entries.map((e) => e.schedule.name));
    for (const name of this.states.keys()) if (!names.has(name)) this.states.delete(name);
    for (const name of this.parsed.keys()) if (!byName.has(name)) this.parsed.delete(name);
    for (const entry of entries) {
      const state = this.stateOf(entry.schedule);
      // An edited schedule's next tick follows its new expression.
      state.recent = null;
      state.nextTick = nextTick(entry.schedule.trigger, this.now());
    }
    this.entries = entries;
    return true;
  }

  private parseStored(record: StoredSchedule): Schedule | null {
    const json = JSON.stringify(record.spec);
    const known = this.parsed.get(record.name);
    if (known?.json === json) return known.schedule;
    let schedule: Schedule | null = null;
    try {
      const { task, ...options } = record.spec!;
      schedule = createSchedule(task, { ...options, name: record.name });
    } catch (error) {
      this.logger.warn("scheduler: a stored schedule cannot run; edit or delete it", { schedule: record.name, error });
    }
    this.parsed.set(record.name, { json, schedule });
    return schedule;
  }

  /** Now, by the store's clock (this process's clock corrected by the measured offset). */
  private now(): number {
    return this.clock.now() + this.offset;
  }

  /**
   * Measures how far this process's clock is from the store's (half the round trip taken off), so that ticks
   * are due by the time every replica shares. A failure keeps the last offset: the pass that follows reads the
   * same store and reports it.
   */
  private async followStoreClock(): Promise<void> {
    if (!this.store.serverTime) return;
    const local = this.clock.now();
    if (this.offsetReadAt !== null && local - this.offsetReadAt < CLOCK_SYNC_MS) return;
    let server: number;
    try {
      server = await this.store.serverTime();
    } catch {
      return;
    }
    const after = this.clock.now();
    if (!Number.isFinite(server)) return;
    const offset = server - (local + after) / 2;
    // The first measurement moves the start too: a new schedule's first tick is the first after the start by the store's clock.
    if (this.offsetReadAt === null) this.startedAt += offset - this.offset;
    this.offset = offset;
    this.offsetReadAt = after;
    if (Math.abs(offset) > SKEW_WARN_MS && !this.warnedSkew) {
      this.warnedSkew = true;
      this.logger.warn(
        `this process's clock is ${(Math.abs(offset) / 1000).toFixed(1)} s ${offset < 0 ? "ahead of" : "behind"} the schedule store's; the scheduler keeps to the store's clock (jfast docs scheduler#clocks)`,
        { offset_ms: Math.round(offset) },
      );
    }
  }

  get running(): boolean {
    return this.loop !== null;
  }

  start(): void {
    if (this.loop) return;
    this.startedAt = this.now();
    const abort = new AbortController();
    this.abort = abort;
    this.loop = this.run(abort.signal);
  }

  /** Stops after the pass in flight, if any, has finished its claims. */
  async stop(): Promise<void> {
    const loop = this.loop;
    if (!loop) return;
    this.abort?.abort();
    await loop;
    this.loop = null;
    this.abort = null;
  }

  /**
   * One pass at the clock's current time: claims what is due, returns when the next pass should run.
   * The loop calls it; tests call it directly with a fake clock.
   */
  async runPass(): Promise<number> {
    await this.followStoreClock();
    const now = this.now();
    let errors = 0;
    let lastTicks: Map<string, number>;
    try {
      await this.readStored();
      lastTicks = await this.store.lastTicks({ names: this.entries.map((e) => e.schedule.name) });
    } catch (error) {
      this.recordError(error, now);
      return now + this.retryMs;
    }
    let wakeAt = now + this.maxSleepMs;
    for (const { schedule, paused, since } of this.entries) {
      const state = this.stateOf(schedule);
      const claimed = lastTicks.get(schedule.name) ?? null;
      state.lastTick = claimed;
      const recent = this.recentTick(schedule, state, now);
      const due = paused ? null : this.dueTick(recent, claimed, since);
      if (due !== null) {
        try {
          await this.fire(schedule, state, due, claimed, now);
          state.lastError = null;
        } catch (error) {
          errors++;
          state.lastError = this.recordError(error, now, schedule.name);
          wakeAt = Math.min(wakeAt, now + this.retryMs);
        }
      }
      state.recent = recent;
      state.nextTick = nextTick(schedule.trigger, now);
      if (state.nextTick !== null) wakeAt = Math.min(wakeAt, state.nextTick);
    }
    if (errors === 0) this.failing = false;
    if (now - this.lastPrune >= this.pruneEveryMs) await this.prune(now);
    return wakeAt;
  }

  status(): SchedulerStatus {
    const running = this.running;
    const status = running && !this.failing ? "ok" : "degraded";
    return {
      status,
      running,
      store: this.store.kind,
      schedules: this.entries.map(({ schedule, origin, paused, updatedAt, updatedBy }) => {
        const state = this.stateOf(schedule);
        return {
          name: schedule.name,
          task: schedule.task,
          origin,
          paused,
          payload: { ...schedule.payload },
          updatedBy,
          updatedAt: iso(updatedAt),
          ...describeTrigger(schedule.trigger),
          catchUp: schedule.catchUp,
          nextTick: iso(state.nextTick),
          lastTick: iso(state.lastTick),
          lastError: state.lastError,
        };
      }),
      lastError: this.lastError,
      ...(status === "degraded"
        ? { reason: running ? `the scheduler is failing: ${this.lastError?.message ?? "unknown error"}` : "the scheduler is stopped" }
        : {}),
    };
  }

  /**
   * The latest tick at or before `now`. Between two ticks the last pass already knows it; finding it from
   * scratch costs a few milliseconds for a sparse cron, which every pass of every process would pay.
   */
  private recentTick(schedule: Schedule, state: State, now: number): number | null {
    const { recent, nextTick: upcoming } = state;
    if (upcoming !== null && recent !== null && recent <= now) {
      if (now < upcoming) return recent;
      const following = nextTick(schedule.trigger, upcoming);
      if (following === null || following > now) return upcoming;
    }
    return previousTick(schedule.trigger, now);
  }

  /** The tick to claim now, or null: the most recent tick, if it is newer than the last claim and than the last change. */
  private dueTick(recent: number | null, claimed: number | null, since: number | null): number | null {
    if (recent === null) return null;
    if (since !== null && recent <= since) return null;
    if (claimed === null) {
      // New: it starts with its first tick after this process started, never with one before.
      return recent > this.startedAt ? recent : null;
    }
    return recent > claimed ? recent : null;
  }

  private async fire(schedule: Schedule, state: State, due: number, claimed: number | null, now: number): Promise<void> {
    const late = now - due > this.missedAfterMs;
    if (late && !schedule.catchUp) {
      if (state.skipped !== due) {
        state.skipped = due;
        this.logger.info("scheduler: skipped a missed tick (catchUp: false)", { schedule: schedule.name, tick: iso(due) });
      }
      return;
    }
    const won = await this.store.claim({ name: schedule.name, tick: due, job: tickJob(schedule, due) });
    if (!won) return;
    state.lastTick = due;
    if (late) {
      this.logger.info("scheduler: fired the most recent missed tick; older ones are skipped", {
        schedule: schedule.name,
        tick: iso(due),
        last_claimed: iso(claimed),
      });
    } else {
      this.logger.debug("scheduler: enqueued tick", { schedule: schedule.name, tick: iso(due) });
    }
  }

  private async prune(now: number): Promise<void> {
    this.lastPrune = now;
    try {
      const removed = await this.store.prune({ before: now - this.retentionMs });
      if (removed > 0) this.logger.debug("scheduler: pruned old claims", { removed });
    } catch (error) {
      this.logger.warn("scheduler: pruning old claims failed", { error });
    }
  }

  private recordError(error: unknown, now: number, schedule?: string): { message: string; at: string } {
    const message = error instanceof Error ? error.message.split("\n")[0]! : String(error);
    const entry = { message, at: new Date(now).toISOString() };
    this.lastError = schedule ? { ...entry, schedule } : entry;
    this.failing = true;
    this.logger.error("scheduler: pass failed; the tick stays unclaimed and is retried", { schedule, error });
    return entry;
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let wakeAt: number;
      try {
        wakeAt = await this.runPass();
      } catch (error) {
        this.recordError(error, this.now());
        wakeAt = this.now() + this.retryMs;
      }
      if (signal.aborted) break;
      wakeAt = Math.min(wakeAt, this.now() + this.maxSleepMs);
      // Until the next pass is due, look at the stored schedules every pollMs: a change made elsewhere passes at once.
      while (!signal.aborted && this.now() < wakeAt) {
        const wake = new AbortController();
        this.wake = wake;
        const stop = () => wake.abort();
        signal.addEventListener("abort", stop, { once: true });
        await this.clock.sleep(Math.min(this.pollMs, Math.max(0, wakeAt - this.now())), wake.signal);
        signal.removeEventListener("abort", stop);
        this.wake = null;
        if (wake.signal.aborted) break;
        if (this.now() >= wakeAt) break;
        try {
          if (await this.readStored()) break;
        } catch {
          // The pass that follows reads the same store and reports it.
          break;
        }
      }
    }
  }
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
