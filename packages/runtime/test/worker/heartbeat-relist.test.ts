import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import type { Logger } from "../../src/core/logger.js";
import { Heartbeat } from "../../src/worker/heartbeat.js";
import { blockEventLoop } from "../conformance/harness.js";
import { eventually, openTestBackend, sleep } from "../postgres/pg-test-env.js";

/**
 * A fast worker tells the heartbeat thread of every job it claims, thousands between two of its beats. The thread
 * must not keep (and, once the event loop blocks, extend) every job it was ever told of: it gets the list of the
 * jobs still held every thousand or so, and keeps those and the ones told since.
 */
describe("the heartbeat thread after thousands of jobs between two beats", () => {
  it("extends the jobs the worker holds, not every job it was told of", async () => {
    const { backend, cleanup } = await openTestBackend();
    const warnings: Array<{ message: string; fields: Record<string, unknown> }> = [];
    const logger: Logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: (message, fields) => void warnings.push({ message, fields: fields ?? {} }),
      error: () => undefined,
    };
    let held: string[] = [];
    const heartbeat = new Heartbeat({ backend, workerId: `relist-${randomUUID()}`, leaseMs: 1000, logger, held: () => held, cancelled: () => undefined });
    heartbeat.start();
    try {
      // From source the thread compiles its TypeScript through tsx and connects, seconds on a loaded machine: the
      // first stall it bridges says it is up.
      const stalled = () => warnings.find((w) => w.message.startsWith("the event loop was blocked")) ?? null;
      held = [randomUUID()];
      heartbeat.hold([new Job({ id: held[0], task: "relist.quick", payload: {} })]);
      for (let round = 0; round < 10 && !stalled(); round++) {
        blockEventLoop(1000);
        await eventually("the heartbeat thread to be up", async () => stalled(), 3000).catch(() => null);
      }
      expect(stalled(), "the heartbeat thread bridged a first stall").not.toBeNull();
      // A beat of the worker's own ends that stall: the thread's list is the worker's again, and a new stall is reported.
      held = [];
      warnings.length = 0;
      await sleep(1000);
      // 3 000 jobs claimed 50 at a time, each claim's jobs done by the next but the last 10 of each claim.
      const told: string[] = [];
      for (let claim = 0; claim < 60; claim++) {
        const jobs = Array.from({ length: 50 }, () => new Job({ task: "relist.quick", payload: {} }));
        heartbeat.hold(jobs);
        told.push(...jobs.map((job) => job.id));
        held = jobs.slice(-10).map((job) => job.id);
      }
      // The event loop blocked past 40 % of the lease: the thread extends on the worker's behalf.
      blockEventLoop(2000);
      const kept = await eventually("the heartbeat thread to keep the leases", async () => stalled(), 10_000);
      expect(told).toHaveLength(3000);
      // What it extended: the jobs held when it last had the list, and those told since (fewer than two lists' worth).
      expect(kept.fields.jobs).toBeGreaterThanOrEqual(held.length);
      expect(kept.fields.jobs).toBeLessThanOrEqual(1000 + 50 + 10);
    } finally {
      heartbeat.stop();
      await cleanup();
    }
  }, 60_000);
});
