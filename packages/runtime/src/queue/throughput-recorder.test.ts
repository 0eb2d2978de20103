import { afterEach, describe, expect, it, vi } from "vitest";
import { MINUTE_MS, type ThroughputRow } from "../core/throughput.js";
import { Job } from "../core/job.js";
import { bucketOf } from "../core/latency-histogram.js";
import { createLogger } from "../observability/logger.js";
import { ThroughputRecorder } from "./throughput-recorder.js";

/** A store that keeps what each flush wrote, and can be made to fail. */
function recordingStore() {
  const writes: ThroughputRow[][] = [];
  let failing = false;
  return {
    writes,
    fail: (on: boolean) => (failing = on),
    store: {
      kind: "memory" as const,
      async add(rows: ThroughputRow[]) {
        if (failing) throw new Error("store down");
        writes.push(rows.map((r) => ({ ...r })));
      },
      async read() {
        return [];
      },
      async series() {
        return [];
      },
      async prune() {},
    },
  };
}

const sorted = (rows: ThroughputRow[]) => [...rows].sort((a, b) => a.minute - b.minute || a.task.localeCompare(b.task));

describe("throughput recorder", () => {
  afterEach(() => vi.useRealTimers());

  it("counts per minute and task, tasks interleaved and across a minute's end, each flush only what is new", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const start = 100 * MINUTE_MS + 59_000;
    vi.setSystemTime(start);
    const { store, writes } = recordingStore();
    const recorder = new ThroughputRecorder({ store, logger: createLogger({ service: "t", level: "silent" }) });
    const a = new Job({ task: "a" });
    const b = new Job({ task: "b" });
    recorder.finished(a, "ok");
    recorder.finished(a, "ok");
    recorder.finished(b, "retry");
    recorder.finished(a, "dead");
    vi.setSystemTime(start + 1_000); // the next minute
    recorder.finished(a, "ok");
    recorder.finished(b, "ok");
    await recorder.flush();
    expect(sorted(writes[0]!)).toEqual([
      { minute: 100 * MINUTE_MS, task: "a", processed: 2, failed: 1, dead: 1, run: {}, wait: {} },
      { minute: 100 * MINUTE_MS, task: "b", processed: 0, failed: 1, dead: 0, run: {}, wait: {} },
      { minute: 101 * MINUTE_MS, task: "a", processed: 1, failed: 0, dead: 0, run: {}, wait: {} },
      { minute: 101 * MINUTE_MS, task: "b", processed: 1, failed: 0, dead: 0, run: {}, wait: {} },
    ]);
    // After a flush, counting starts again from zero in the same minute.
    recorder.finished(b, "ok");
    await recorder.flush();
    expect(writes[1]).toEqual([{ minute: 101 * MINUTE_MS, task: "b", processed: 1, failed: 0, dead: 0, run: {}, wait: {} }]);
  });

  it("keeps counts a failed flush could not write and adds later ones to them", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(7 * MINUTE_MS);
    const { store, writes, fail } = recordingStore();
    const recorder = new ThroughputRecorder({ store, logger: createLogger({ service: "t", level: "silent" }) });
    const a = new Job({ task: "a" });
    recorder.finished(a, "ok");
    fail(true);
    await recorder.flush();
    recorder.finished(a, "ok");
    recorder.finished(a, "retry");
    fail(false);
    await recorder.flush();
    expect(writes).toEqual([[{ minute: 7 * MINUTE_MS, task: "a", processed: 2, failed: 1, dead: 0, run: {}, wait: {} }]]);
  });

  it("adds each attempt's run time and wait to its minute's histograms", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(9 * MINUTE_MS + 30_000);
    const { store, writes } = recordingStore();
    const recorder = new ThroughputRecorder({ store, logger: createLogger({ service: "t", level: "silent" }) });
    const a = new Job({ task: "a", availableAt: new Date(9 * MINUTE_MS + 30_000 - 250) });
    recorder.started(a);
    recorder.finished(a, "ok", 40);
    await recorder.flush();
    expect(writes[0]).toEqual([{ minute: 9 * MINUTE_MS, task: "a", processed: 1, failed: 0, dead: 0, run: { [bucketOf(40)]: 1 }, wait: { [bucketOf(250)]: 1 } }]);
  });
});
