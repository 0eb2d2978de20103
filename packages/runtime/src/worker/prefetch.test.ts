import { describe, expect, it } from "vitest";
import { createMemoryBackend } from "../backends/memory/memory-backend.js";
import { defineTask } from "../core/define-task.js";
import { Job } from "../core/job.js";
import { createLogger } from "../observability/logger.js";
import { Worker } from "./worker.js";
import { PREFETCH_FAIR_MAX, PREFETCH_MAX, prefetchTarget } from "./prefetch-policy.js";

function makeWorker(backend: ReturnType<typeof createMemoryBackend>, handler: () => Promise<void>, claims: number[]) {
  const definition = defineTask("pre.job", handler);
  // Counts claim sizes; everything else goes to the real backend.
  const counted = new Proxy(backend, {
    get(target, key) {
      if (key === "claim") {
        return (params: Parameters<typeof backend.claim>[0]) => {
          claims.push(params.limit);
          return target.claim(params);
        };
      }
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return new Worker({
    backend: counted,
    lookup: () => definition,
    execute: (d, job, cancellation) => Promise.resolve(d.handler(job.payload, { ctx: { serviceName: "t", require: <T,>() => undefined as T }, job, session: undefined, signal: cancellation.signal, locals: {}, progress: () => undefined, log: { info() {}, warn() {}, error() {} } })),
    logger: createLogger({ service: "t", level: "silent" }),
    concurrency: 2,
    prefetch: 4,
    leaseMs: 30_000,
    backoffBaseMs: 10,
    pollIntervalMs: 1000,
    defaultMaxAttempts: 3,
  });
}

describe("worker prefetch", () => {
  it("keeps the adaptive buffer short on a queue with a fair task, and a fixed one as given", () => {
    const at = { concurrency: 10, pushesAhead: false, jobsPerMs: 50, fixed: undefined };
    expect(prefetchTarget(at)).toBe(PREFETCH_MAX);
    expect(prefetchTarget({ ...at, fair: true })).toBe(PREFETCH_FAIR_MAX);
    expect(prefetchTarget({ ...at, fair: true, fixed: 200 })).toBe(200);
  });

  it("claims in batches of concurrency + prefetch and runs every job once", async () => {
    const backend = createMemoryBackend();
    const seen: string[] = [];
    const claims: number[] = [];
    await backend.enqueue({ jobs: Array.from({ length: 30 }, (_, i) => Object.assign(new Job({ task: "pre.job", payload: { i } }), { maxAttempts: 3 })) });
    const worker = makeWorker(backend, async () => {
      seen.push("x");
    }, claims);
    worker.start();
    for (let i = 0; i < 400 && seen.length < 30; i++) await new Promise((r) => setTimeout(r, 10));
    await worker.stop({ graceMs: 1000 });
    expect(seen).toHaveLength(30);
    expect(claims[0]).toBe(6);
    // Batches, not one claim per finished job.
    expect(claims.length).toBeLessThan(20);
    await backend.close();
  });

  it("releases prefetched jobs on stop with their attempt returned", async () => {
    const backend = createMemoryBackend();
    const jobs = Array.from({ length: 6 }, () => Object.assign(new Job({ task: "pre.job" }), { maxAttempts: 3 }));
    await backend.enqueue({ jobs });
    const worker = makeWorker(backend, () => new Promise(() => undefined), []);
    worker.start();
    for (let i = 0; i < 200 && worker.activeJobs.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    await worker.stop({ graceMs: 0 });
    const again = await backend.claim({ workerId: "after", limit: 10, leaseMs: 30_000 });
    expect(again.map((j) => j.id).sort()).toEqual(jobs.map((j) => j.id).sort());
    expect(again.every((j) => j.attempts === 1)).toBe(true);
    await backend.close();
  });
});
