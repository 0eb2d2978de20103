import { describe, expect, it } from "vitest";
import { createMemoryBackend } from "../backends/memory/memory-backend.js";
import { defineTask } from "../core/define-task.js";
import { Job } from "../core/job.js";
import { createLogger } from "../observability/logger.js";
import { JOB_CHAIN_TURN_MS, Worker } from "./worker.js";

/** Busy for `ms` without yielding: a handler whose work never waits on I/O. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe("a buffer of jobs that never wait on I/O", () => {
  it("lets the event loop run between turns instead of emptying the buffer in one", async () => {
    const backend = createMemoryBackend();
    const total = 200;
    await backend.enqueue({ jobs: Array.from({ length: total }, (_, i) => new Job({ task: "spin.job", payload: { i } })) });
    let ran = 0;
    // Each job ends in the same turn it started (an async handler that never awaits).
    const definition = defineTask("spin.job", async () => {
      spin(0.1);
      ran++;
    });
    const worker = new Worker({
      backend,
      lookup: () => definition,
      execute: (d, job, cancellation) =>
        Promise.resolve(d.handler(job.payload, { ctx: { serviceName: "t", require: <T,>() => undefined as T }, job, session: undefined, signal: cancellation.signal, locals: {}, progress: () => undefined, log: { info() {}, warn() {}, error() {} } })),
      logger: createLogger({ service: "t", level: "silent" }),
      concurrency: 1,
      // The whole queue in one claim: without turns, every job would run before anything else does.
      prefetch: total,
      leaseMs: 30_000,
      backoffBaseMs: 10,
      pollIntervalMs: 1000,
      defaultMaxAttempts: 3,
    });
    // How many jobs had run each time the event loop came round to a timer or an immediate.
    const seenAtTicks: number[] = [];
    const ticker = setInterval(() => seenAtTicks.push(ran), 0);
    const immediates = () => {
      seenAtTicks.push(ran);
      if (ran < total) setImmediate(immediates);
    };
    setImmediate(immediates);
    try {
      worker.start();
      for (let i = 0; i < 500 && ran < total; i++) await new Promise((r) => setTimeout(r, 5));
    } finally {
      clearInterval(ticker);
      await worker.stop({ graceMs: 1000 });
      await backend.close();
    }
    expect(ran).toBe(total);
    // The loop got its turns while the buffer ran: counts strictly between none and all were seen, and no gap
    // between two turns held much more than JOB_CHAIN_TURN_MS of jobs (0.1 ms each, plus the one that crossed it).
    const during = [...new Set(seenAtTicks.filter((n) => n > 0 && n < total))].sort((a, b) => a - b);
    expect(during.length).toBeGreaterThan(5);
    const gaps = during.slice(1).map((n, i) => n - during[i]!);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(Math.ceil(JOB_CHAIN_TURN_MS / 0.1) * 3);
  });
});
