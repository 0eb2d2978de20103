import { afterEach, describe, expect, it } from "vitest";
import { bucketBounds, bucketOf, mergeInto, percentilesOf, type Histogram } from "../../src/core/latency-histogram.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import { MINUTE_MS, StatsSpan, type ThroughputStore } from "../../src/core/throughput.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import { ErrorCode } from "../../src/errors/codes.js";
import { createLogger } from "../../src/observability/logger.js";
import { openStatsStore } from "../../src/queue/queue-control.js";
import { ThroughputRecorder } from "../../src/queue/throughput-recorder.js";
import { makeJob, type BackendFactory } from "./harness.js";

/**
 * Where a service on this backend keeps its stats, per test: `process()` opens what one more process of the
 * service would (its own backend and, when the service has one, its own database connection) on one namespace.
 */
export interface StatsPlace {
  process(): Promise<{ backend: QueueBackend; database: Pick<DatabaseProvider, "sql"> | null; queue: string; close(): Promise<void> }>;
  cleanup(): Promise<void>;
  /** False for the memory queue: its history lives in its one process (a new memory queue starts empty). */
  durable: boolean;
}

const logger = createLogger({ service: "conformance", level: "silent" });

/**
 * Throughput, run-time and wait history (docs/observability.md#run-and-wait-time-history): what two processes
 * record in the same minute adds up, percentiles land in the right bucket, and it is there after a reopen.
 * `place` null: the service has no shared store on this backend, which says NOT_SUPPORTED.
 */
export function describeStats(factory: BackendFactory, openPlace: (() => Promise<StatsPlace>) | null): void {
  describe(`${factory.name}: stats history`, () => {
    const cleanups: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    if (!openPlace) {
      it("says NOT_SUPPORTED: the service has no shared place for the history", async () => {
        const { backend, cleanup } = await factory.create();
        cleanups.push(cleanup);
        expect(backend.capabilities.throughputStore).toBe(false);
        expect(() => openStatsStore({ backend, database: null, queue: "q" })).toThrow(expect.objectContaining({ code: ErrorCode.NOT_SUPPORTED }));
      });
      return;
    }

    async function store(place: StatsPlace): Promise<ThroughputStore> {
      const process = await place.process();
      cleanups.push(() => process.close());
      return openStatsStore(process);
    }

    it("adds two processes' minutes, answers percentiles inside the right bucket, and keeps them across a reopen", async () => {
      const place = await openPlace();
      cleanups.push(() => place.cleanup());
      // Two processes with a store each; the memory queue's two recorders are two workers of its one process.
      const own = await store(place);
      const first = new ThroughputRecorder({ store: own, logger });
      const second = new ThroughputRecorder({ store: place.durable ? await store(place) : own, logger });
      const now = Date.now();
      // 90 fast attempts on one process, 10 slow ones and a dead one on the other, all due 1.8 s before they start.
      for (let i = 0; i < 90; i++) {
        const job = makeJob({ task: "stats.a", availableAt: new Date(now - 1800) });
        first.started(job);
        first.finished(job, "ok", 20);
      }
      for (let i = 0; i < 10; i++) {
        const job = makeJob({ task: "stats.a", availableAt: new Date(now - 1800) });
        second.started(job);
        second.finished(job, "ok", 3000);
      }
      second.finished(makeJob({ task: "stats.b" }), "dead", 5);
      await first.close();
      await second.close();

      const reader = place.durable ? await store(place) : first.store;
      const from = Math.floor(now / MINUTE_MS) * MINUTE_MS - MINUTE_MS;
      for (const span of [StatsSpan.minute, StatsSpan.hour]) {
        const rows = await reader.series({ from: span === StatsSpan.hour ? from - 60 * MINUTE_MS : from, span, task: "stats.a" });
        expect(rows.reduce((sum, r) => sum + r.processed, 0)).toBe(100);
        // Usually one row; two when the minute (or hour) turned during the test: their histograms add up.
        const run: Histogram = {};
        const wait: Histogram = {};
        for (const row of rows) {
          mergeInto(run, row.run);
          mergeInto(wait, row.wait);
        }
        const p = percentilesOf(run);
        inBucket(p.p50!, 20);
        inBucket(p.p95!, 3000);
        inBucket(p.p99!, 3000);
        inBucket(percentilesOf(wait).p50!, 1800);
      }
      const all = await reader.series({ from, span: StatsSpan.minute });
      expect(all.filter((r) => r.task === "stats.b").reduce((sum, r) => sum + r.dead, 0)).toBe(1);
      const counted = await reader.read({ from });
      expect(counted.reduce((sum, r) => sum + r.processed, 0)).toBe(100);
      if (!place.durable) {
        const fresh = await store(place);
        expect(await fresh.series({ from, span: StatsSpan.minute })).toEqual([]);
      }
    });
  });
}

/** `value` lies in the same log bucket as `truth` (the histogram's resolution). */
function inBucket(value: number, truth: number): void {
  const { low, high } = bucketBounds(bucketOf(truth));
  expect(value).toBeGreaterThanOrEqual(low);
  expect(value).toBeLessThan(high);
}
