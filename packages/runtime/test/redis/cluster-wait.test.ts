import { afterAll, describe, expect, it } from "vitest";
import { Redis, type Cluster } from "ioredis";
import { defineTask } from "../../src/core/define-task.js";
import { makeJob, sleep, startTestWorker } from "../conformance/harness.js";
import { redisCluster } from "./redis-cluster-env.js";
import { dropQueue, openBackend, rawClient, uniqueQueue } from "./redis-test-env.js";

const target = redisCluster();
const raw = rawClient(target) as Cluster;

/** WAIT calls the primary serving `queue` has answered so far (INFO commandstats). */
async function waits(queue: string): Promise<number> {
  await raw.connect().catch(() => undefined);
  const slot = Number(await raw.cluster("KEYSLOT", `{${queue}}`));
  const [host, port] = raw.slots[slot]![0]!.split(":");
  const primary = new Redis({ host: host!, port: Number(port), lazyConnect: true });
  try {
    await primary.connect();
    return Number(/cmdstat_wait:calls=(\d+)/.exec(await primary.info("commandstats"))?.[1] ?? 0);
  } finally {
    primary.disconnect();
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

/** What wait_replicas costs on the loopback cluster: enqueue latency and drain time, with and without WAIT. */
async function measure(waitReplicas: number): Promise<{ waitReplicas: number; enqueueP50Ms: number; enqueueP99Ms: number; drain2000Ms: number; waitCalls: number }> {
  const queue = uniqueQueue(`wait-${waitReplicas}`);
  const backend = await openBackend(queue, { waitReplicas }, target);
  const waitsBefore = await waits(queue);
  try {
    const latencies: number[] = [];
    for (let i = 0; i < 300; i++) {
      const started = performance.now();
      await backend.enqueue({ jobs: [makeJob({ task: "wait.noop" })] });
      latencies.push(performance.now() - started);
    }
    latencies.sort((a, b) => a - b);
    await backend.enqueue({ jobs: Array.from({ length: 1700 }, () => makeJob({ task: "wait.noop" })) });
    let done = 0;
    const task = defineTask("wait.noop", async () => {
      done++;
    });
    const started = performance.now();
    const worker = startTestWorker({ backend, tasks: [task], concurrency: 10, pollIntervalMs: 1000 });
    while (done < 2000) await sleep(5);
    // The last completions are written in the background; stopping waits for them.
    await worker.stop({ graceMs: 10_000 });
    const drain2000Ms = performance.now() - started;
    expect(await backend.depths()).toEqual({ ready: 0, scheduled: 0, running: 0, dead: 0 });
    return {
      waitReplicas,
      enqueueP50Ms: Number(percentile(latencies, 50).toFixed(2)),
      enqueueP99Ms: Number(percentile(latencies, 99).toFixed(2)),
      drain2000Ms: Math.round(drain2000Ms),
      waitCalls: (await waits(queue)) - waitsBefore,
    };
  } finally {
    await backend.close();
    await dropQueue(queue, undefined, target);
  }
}

describe("redis cluster: wait_replicas", () => {
  afterAll(() => raw.disconnect());

  it("sends WAIT after every enqueue and completion when set, never when not, and measures its cost", async () => {
    const plain = await measure(0);
    const waited = await measure(1);
    console.log(JSON.stringify({ wait_replicas_cost: [plain, waited] }));
    expect(plain.waitCalls).toBe(0);
    // 300 single enqueues, the batch, and at least one completion call (completions are batched).
    expect(waited.waitCalls).toBeGreaterThan(301);
  }, 120_000);
});
