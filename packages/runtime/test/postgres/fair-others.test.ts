import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineTask } from "../../src/core/define-task.js";
import type { TaskLimits } from "../../src/core/limits.js";
import type { Worker } from "../../src/worker/worker.js";
import { eventually, makeJob, sleep, startTestWorker } from "../conformance/harness.js";
import { openTestBackend } from "./pg-test-env.js";

const FAIR = "others.fair";
const PLAIN = "others.plain";

/**
 * Beside a fair backlog, claims stop looking for the queue's other jobs for a moment after a look found none
 * (backends/postgres/claim.ts, othersQuiet): each such look reads the whole fair backlog. Those jobs still start
 * while the backlog drains: one enqueued (from another process) at once, through its wake-up; one that only comes
 * due (delayed), within the moment.
 */
describe("postgres: the queue's other jobs beside a fair backlog", () => {
  let env: Awaited<ReturnType<typeof openTestBackend>>;
  let peer: Awaited<ReturnType<typeof openTestBackend>>;
  let worker: Worker | undefined;

  beforeAll(async () => {
    env = await openTestBackend({ poolSize: 6 });
    peer = await openTestBackend({ schema: env.schema, poolSize: 2 });
    await env.backend.setLimits({ limits: new Map<string, TaskLimits>([[FAIR, { concurrency: null, rateLimit: null, fair: { weights: {} } }]]) });
  });

  afterAll(async () => {
    await worker?.stop({ graceMs: 0 });
    await peer?.backend.close();
    await peer?.database.close();
    await env?.cleanup();
  });

  it("starts a plain job enqueued elsewhere, and a delayed one coming due, before the fair backlog is done", async () => {
    const fairJobs = Array.from({ length: 3000 }, (_, i) => {
      const job = makeJob({ task: FAIR, payload: { i }, tenantId: `t${i % 100}` });
      job.limitKey = `t${i % 100}`;
      return job;
    });
    for (let i = 0; i < fairJobs.length; i += 1000) await env.backend.enqueue({ jobs: fairJobs.slice(i, i + 1000) });
    const started: string[] = [];
    worker = startTestWorker({
      backend: env.backend,
      concurrency: 4,
      pollIntervalMs: 5_000,
      tasks: [
        defineTask(FAIR, async () => {
          started.push(FAIR);
          await sleep(2);
        }),
        defineTask(PLAIN, async (payload: { kind: string }) => void started.push(payload.kind)),
      ],
    });
    await eventually("the fair backlog drains", async () => started.length >= 300);
    // From another process, while the worker drains the backlog: its wake-up reaches the worker.
    await peer.backend.enqueue({ jobs: [makeJob({ task: PLAIN, payload: { kind: "enqueued" } })] });
    // Due in 300 ms, with no enqueue then to wake anyone.
    await peer.backend.enqueue({ jobs: [makeJob({ task: PLAIN, payload: { kind: "delayed" }, delayMs: 300 })] });
    await eventually("both plain jobs ran", async () => started.includes("enqueued") && started.includes("delayed"), 30_000);
    const fairBefore = (kind: string) => started.slice(0, started.indexOf(kind)).filter((t) => t === FAIR).length;
    // Each started while most of the backlog still waited.
    expect(fairBefore("enqueued")).toBeLessThan(2000);
    expect(fairBefore("delayed")).toBeLessThan(2500);
  }, 120_000);
});
