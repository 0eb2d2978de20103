/**
 * What every scenario of one backend shares: the parent service instance (enqueues and inspects), the effects
 * database, the two workers and their proxies, the engine the run may kill, and the counting of one batch of
 * jobs (its own range of `n`) into lost, duplicated effects, runs twice and stuck.
 */
import pg from "pg";
import { Job, type QueueProvider } from "@jfast/runtime";
import { sleep } from "../lib/subject.js";
import type { FaultProxy } from "./proxy.js";
import type { ChaosBackend } from "./service.js";
import { POLL_INTERVAL_S, VISIBILITY_TIMEOUT_S } from "./service.js";
import type { WorkerProcess } from "./workers.js";

export interface ScenarioResult {
  backend: ChaosBackend | "kafka";
  scenario: string;
  jobs: number;
  lost: number;
  duplicated: number;
  /** Jobs whose handler body started more than once (a kill, a lost lease): the inbox keeps the effect single. */
  runsTwice: number;
  stuck: number;
  /** One figure per fault: ms until the work the fault interrupted was done again (see each scenario). */
  recoveryMs: number[];
  /** What happened, for the detail column. */
  notes: string[];
  /** What the run failed on: lost, duplicated, stuck, a kill between jobs, a crash. */
  problems: string[];
  /** Measured and stated, not failed: what `appendfsync everysec` lost, ticks a skewed clock fired early. */
  findings: string[];
}

export interface Range {
  from: number;
  to: number;
}

/** How long one batch may take to drain: CHAOS_TIMEOUT_MS, else 90 s or 60 ms per job, whichever is longer. */
export const drainTimeoutMs = (jobs: number) => Number(process.env.CHAOS_TIMEOUT_MS ?? Math.max(90_000, jobs * 60));

export class Harness {
  private next = 0;

  constructor(
    readonly backend: ChaosBackend,
    readonly queue: QueueProvider,
    readonly db: pg.Pool,
    readonly schema: string,
    readonly workers: WorkerProcess[],
    /** One per worker, same order; empty when the workers reach the engine directly (rabbitmq-cluster). */
    readonly proxies: FaultProxy[],
  ) {}

  /** The chaos jobs' queue; the ticks of the clock scenario have a queue of their own. */
  private async defaultDepths() {
    return (await this.queue.depthsByQueue()).default!;
  }

  /** Both workers crashed on their own: nothing will drain (the crash is reported). */
  hopeless(): boolean {
    return this.workers.every((w) => !w.alive && w.crashes.length > 0);
  }

  /** A fresh range of `n` for a scenario's jobs. */
  range(jobs: number): Range {
    const r = { from: this.next, to: this.next + jobs };
    this.next += jobs;
    return r;
  }

  /**
   * `ms`: how long each handler takes (±50%); by default 5–40 ms. `block`: the `n` whose handler keeps the event
   * loop busy for `block.ms` (synchronous CPU work), whose job ids it returns. `maxAttempts`: per job, instead of
   * the service's 25.
   */
  async enqueue(r: Range, ms?: number, options: { block?: { ns: ReadonlySet<number>; ms: number }; maxAttempts?: number } = {}): Promise<string[]> {
    const payload = (n: number) => ({ n, ...(ms === undefined ? {} : { ms }), ...(options.block?.ns.has(n) ? { blockMs: options.block.ms } : {}) });
    const attempts = options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts };
    const blocked: string[] = [];
    for (let i = r.from; i < r.to; i += 500) {
      const jobs = Array.from({ length: Math.min(500, r.to - i) }, (_, k) => new Job({ task: "chaos.effect", payload: payload(i + k), ...attempts }));
      blocked.push(...jobs.filter((job) => options.block?.ns.has((job.payload as { n: number }).n)).map((job) => job.id));
      await this.queue.enqueue(jobs);
    }
    return blocked;
  }

  /** A query that waits for the effects database while it restarts (the PostgreSQL scenario kills it). */
  async query<T>(text: string, values: unknown[] = []): Promise<T[]> {
    for (let waited = 0; ; waited += 100) {
      try {
        return (await this.db.query(text, values)).rows as T[];
      } catch (error) {
        if (waited >= 60_000) throw error;
        await sleep(100);
      }
    }
  }

  async finished(r: Range): Promise<number> {
    const [row] = await this.query<{ c: number }>(`SELECT count(DISTINCT n)::int AS c FROM ${this.schema}.chaos_effects WHERE phase = 'finished' AND n >= $1 AND n < $2`, [r.from, r.to]);
    return row!.c;
  }

  /** Handler runs of `pid` that started and have not finished: running in it now, or at its death. */
  async inFlight(pid: number): Promise<number[]> {
    const rows = await this.query<{ n: number }>(
      `SELECT s.n FROM ${this.schema}.chaos_effects s WHERE s.phase = 'started' AND s.pid = $1
         AND NOT EXISTS (SELECT 1 FROM ${this.schema}.chaos_effects f WHERE f.phase = 'finished' AND f.run = s.run)`,
      [pid],
    );
    return rows.map((r) => r.n);
  }

  /** ms from `since` until every `n` listed has a finished effect (by anyone); Infinity past `limitMs`. */
  async doneAfter(ns: number[], since: number, limitMs = 60_000): Promise<number> {
    if (ns.length === 0) return 0;
    while (Date.now() - since < limitMs && !this.hopeless()) {
      const [row] = await this.query<{ c: number }>(`SELECT count(DISTINCT n)::int AS c FROM ${this.schema}.chaos_effects WHERE phase = 'finished' AND n = ANY($1)`, [ns]);
      if (row!.c >= new Set(ns).size) return Date.now() - since;
      await sleep(25);
    }
    return Infinity;
  }

  /** ms from `since` until a new effect of the range commits; null when the range was already done. */
  async resumedAfter(r: Range, since: number, limitMs = 60_000): Promise<number | null> {
    const base = await this.finished(r);
    while (Date.now() - since < limitMs && !this.hopeless()) {
      const done = await this.finished(r);
      if (done >= r.to - r.from) return done > base ? Date.now() - since : null;
      if (done > base) return Date.now() - since;
      await sleep(25);
    }
    return Infinity;
  }

  /**
   * For a lost job, whether its handler ever began and in which worker (its "started" rows): a job that never
   * started was dropped before its handler, one that started and never finished hung or was settled mid-run.
   */
  async whereLost(ns: number[]): Promise<string> {
    const rows = await this.query<{ n: number; pid: number; at: Date }>(`SELECT n, pid, at FROM ${this.schema}.chaos_effects WHERE phase = 'started' AND n = ANY($1) ORDER BY at`, [ns]);
    const names = new Map(this.workers.map((w) => [w.pid, w.name]));
    return ns
      .map((n) => {
        const starts = rows.filter((r) => r.n === n);
        if (starts.length === 0) return `n=${n} never started`;
        return `n=${n} started ${starts.map((r) => `in ${names.get(r.pid) ?? `pid ${r.pid}`} at ${r.at.toISOString()}`).join(", ")}`;
      })
      .join("; ");
  }

  /** Jobs of the range whose handler body has started more than once so far. */
  async settleRunsTwice(r: Range): Promise<number> {
    const [row] = await this.query<{ c: number }>(
      `SELECT count(*)::int AS c FROM (SELECT n FROM ${this.schema}.chaos_effects WHERE phase = 'started' AND n >= $1 AND n < $2 GROUP BY n HAVING count(*) > 1) t`,
      [r.from, r.to],
    );
    return row!.c;
  }

  async waitFinished(r: Range, target: number, t0: number): Promise<void> {
    while ((await this.finished(r)) < target && Date.now() - t0 < drainTimeoutMs(r.to - r.from) && !this.hopeless()) await sleep(random(10, 60));
  }

  /**
   * Waits for the range to drain, then for the queue to settle, and counts. `expected`: the `n` that must
   * have an effect (default all of the range; a producer that saw an enqueue fail expects only what was
   * acknowledged).
   */
  async settle(r: Range, t0: number, expected?: Set<number>): Promise<Pick<ScenarioResult, "lost" | "duplicated" | "runsTwice" | "stuck" | "problems"> & { lostIds: number[] }> {
    const want = expected ?? new Set(Array.from({ length: r.to - r.from }, (_, i) => r.from + i));
    const timeout = drainTimeoutMs(r.to - r.from);
    const missing = async () => {
      const rows = await this.query<{ n: number }>(`SELECT DISTINCT n FROM ${this.schema}.chaos_effects WHERE phase = 'finished' AND n >= $1 AND n < $2`, [r.from, r.to]);
      const have = new Set(rows.map((x) => x.n));
      return [...want].filter((n) => !have.has(n));
    };
    while ((await missing()).length > 0 && Date.now() - t0 < timeout && !this.hopeless()) await sleep(100);
    const drainedAt = Date.now();
    // A job whose effect committed while its completion was lost is still leased: it runs again once the
    // lease expires, the inbox skips the effect, the completion settles it. Stuck: still queued or running
    // two leases and poll intervals past the drain.
    const settleLimitMs = 2 * (VISIBILITY_TIMEOUT_S + POLL_INTERVAL_S) * 1000;
    let depths = await this.defaultDepths();
    while (depths.ready + depths.scheduled + depths.running > 0 && Date.now() - drainedAt < settleLimitMs && !this.hopeless()) {
      await sleep(200);
      depths = await this.defaultDepths();
    }
    // A straggler (a redelivery racing the last commit) gets a moment to show a duplicate.
    await sleep(500);
    const lostIds = await missing();
    const [counts] = await this.query<{ total: number; distinct: number; twice: number }>(
      `SELECT (SELECT count(*)::int FROM ${this.schema}.chaos_effects WHERE phase = 'finished' AND n >= $1 AND n < $2) AS total,
              (SELECT count(DISTINCT n)::int FROM ${this.schema}.chaos_effects WHERE phase = 'finished' AND n >= $1 AND n < $2) AS distinct,
              (SELECT count(*)::int FROM (SELECT n FROM ${this.schema}.chaos_effects WHERE phase = 'started' AND n >= $1 AND n < $2 GROUP BY n HAVING count(*) > 1) t) AS twice`,
      [r.from, r.to],
    );
    const stuck = depths.ready + depths.scheduled + depths.running;
    const duplicated = counts!.total - counts!.distinct;
    const problems: string[] = [];
    if (lostIds.length > 0) problems.push(`${lostIds.length} jobs never recorded their effect within ${timeout} ms (e.g. n=${lostIds.slice(0, 5).join(",")}; ${await this.whereLost(lostIds.slice(0, 5))})`);
    if (duplicated > 0) problems.push(`${duplicated} effects recorded more than once`);
    if (stuck > 0) problems.push(`${stuck} jobs still queued or running ${(settleLimitMs / 1000).toFixed(0)} s after the drain: ${JSON.stringify(depths)}`);
    if (depths.dead > 0) problems.push(`${depths.dead} dead letters: ${JSON.stringify((await this.queue.backend.listDead({ limit: 3 })).map((d) => d.lastError))}`);
    return { lost: lostIds.length, lostIds, duplicated, runsTwice: counts!.twice, stuck, problems };
  }
}

export const random = (min: number, max: number) => min + Math.random() * (max - min);
