import { randomBytes } from "node:crypto";

/**
 * Where a subject runs: `both` is the single-process run (the enqueuing and the worker in one process, as a
 * service that also works its own queue); `producer` and `worker` are the two halves of the separate-process run
 * (run-subject.ts `<subject>/split`), each in a process of its own, on the same queue named from `namespace`.
 */
export type SubjectRole = "both" | "producer" | "worker";

export interface SubjectContext {
  /** Names the schema, queue or key prefix: the same in both processes of a separate-process run. */
  readonly namespace: string;
  readonly role: SubjectRole;
}

/** A context for a single-process run, with a fresh namespace. */
export const singleProcess = (): SubjectContext => ({ namespace: randomBytes(4).toString("hex"), role: "both" });

/**
 * One queue implementation under test. Every subject measures the same four things in the same order, in a
 * child process of its own so its peak RSS is its own (the figure covers the enqueuer and the worker together).
 * In the separate-process run the producer process calls `setup`, `enqueue`, `enqueueOne` and `teardown`, the
 * worker process `setup`, `drain`, `startIdle`, `stopIdle` and `teardown`; a subject in the `worker` role leaves
 * the schema or keys it shares with the producer in place at teardown (the producer drops them).
 */
export interface Subject {
  /** The engine or library and the version measured. */
  readonly label: string;
  /** Its settings, as printed in BENCHMARKS.md. */
  readonly settings: string;
  setup(): Promise<void>;
  /** Enqueues `count` no-op jobs in as few calls as the library allows. */
  enqueue(count: number): Promise<void>;
  /** Starts one worker at `concurrency` on the backlog; resolves once `count` handlers have run, worker stopped. */
  drain(count: number, concurrency: number): Promise<void>;
  /** Starts an idle worker (concurrency 10); the runner then times `enqueueOne` → handler start, one job at a time. */
  startIdle(): Promise<void>;
  /** Enqueues one no-op job, resolving when the library says it is stored. */
  enqueueOne(): Promise<unknown>;
  /**
   * The same pickup for a job enqueued by another client of the same queue (a second instance with its own
   * connections), where that differs from `enqueueOne`: jfast on PostgreSQL and on Redis hands a job enqueued in
   * the idle worker's own process over in memory (docs/postgres.md#in-process-hand-off,
   * docs/redis.md#in-process-hand-off). The pickup after `fillDead` is measured this way too, so that the job is
   * claimed past the dead rows.
   */
  enqueueOneElsewhere?(): Promise<unknown>;
  stopIdle(): Promise<void>;
  /** Adds `count` dead/finished rows to the tables a claim scans (PostgreSQL subjects only). */
  fillDead?(count: number): Promise<void>;
  teardown(): Promise<void>;
}

/**
 * The bench's clock, in milliseconds: CLOCK_MONOTONIC, which every process on the machine reads alike, so that a
 * pickup enqueued in one process and started in another is timed on one clock.
 */
export const now = (): number => Number(process.hrtime.bigint()) / 1e6;

/** Shared between a subject's handlers and the measuring loop: how many ran, and when the next one starts. */
export const probe = {
  done: 0,
  started: null as ((at: number) => void) | null,
  hit(): void {
    probe.done++;
    const started = probe.started;
    if (started) {
      probe.started = null;
      started(now());
    }
  },
};

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function waitDone(target: number, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (probe.done < target) {
    if (Date.now() > deadline) throw new Error(`only ${probe.done}/${target} jobs ran within ${timeoutMs} ms`);
    await sleep(2);
  }
}

/** Enqueue one job through `enqueue`, resolve with the ms until its handler started. */
export async function timePickup(enqueue: () => Promise<unknown>): Promise<number> {
  const started = new Promise<number>((resolve) => (probe.started = resolve));
  const t0 = now();
  await enqueue();
  return (await started) - t0;
}

export const services = {
  postgres: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
  redis: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
  amqp: process.env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672",
};
