import { afterEach, describe, expect, it } from "vitest";
import { defineTask } from "../../src/core/define-task.js";
import { createSqlCancelStore } from "../../src/queue/cancel-stores.js";
import type { Worker } from "../../src/worker/worker.js";
import { eventually, makeJob, sleep, startTestWorker } from "../conformance/harness.js";
import { dropSchema, openTestDatabase, uniqueSchema } from "../postgres/pg-test-env.js";
import { dropQueue, openBackend, uniqueQueue } from "./rabbitmq-test-env.js";

/**
 * Two processes of one service on one RabbitMQ queue and one database: a cancellation made in one reaches the
 * other through jfast_cancelled_jobs, which drops the waiting message at delivery or aborts the running handler.
 */
describe("rabbitmq: cancellations recorded in the database, across processes", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function twoProcesses() {
    const queue = uniqueQueue("cancel");
    const schema = uniqueSchema("rmqcancel");
    const database = await openTestDatabase({ schema });
    cleanups.push(async () => {
      await database.close();
      await dropSchema(schema);
      await dropQueue(queue);
    });
    const open = async () => {
      const backend = await openBackend(queue, { cancellations: createSqlCancelStore({ db: database.sql, queue }), cancelReadMs: 100 });
      cleanups.push(() => backend.close());
      return backend;
    };
    return { api: await open(), workerSide: await open() };
  }

  function run(worker: Worker): Worker {
    cleanups.push(() => worker.stop({ graceMs: 0 }));
    return worker;
  }

  it("a job cancelled in one process while its message waits is dropped by the other's worker", async () => {
    const { api, workerSide } = await twoProcesses();
    const ran: string[] = [];
    const t = defineTask("conf.cancel_me", async (_p, { job }) => {
      ran.push(job.id);
    });
    const cancelled = makeJob({ task: "conf.cancel_me", delayMs: 500 });
    const kept = makeJob({ task: "conf.cancel_me", delayMs: 700 });
    await api.enqueue({ jobs: [cancelled, kept] });
    expect(await api.cancel({ id: cancelled.id })).toEqual({ cancelled: true, state: "cancelled" });
    run(startTestWorker({ backend: workerSide, tasks: [t], concurrency: 2, pollIntervalMs: 1000 }));
    await eventually("the job that was not cancelled", async () => ran.includes(kept.id));
    await sleep(300);
    expect(ran).toEqual([kept.id]);
    await eventually("the dropped message acked", async () => {
      const d = await api.depths();
      return d.ready + d.scheduled === 0;
    });
  });

  it("a job cancelled in one process while another runs it: the handler's signal aborts with \"cancelled\", no retry", async () => {
    const { api, workerSide } = await twoProcesses();
    const reasons: unknown[] = [];
    let runs = 0;
    const t = defineTask("conf.long", async (_p, { signal }) => {
      runs++;
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      reasons.push(signal.reason);
    });
    const job = makeJob({ task: "conf.long", maxAttempts: 3 });
    await api.enqueue({ jobs: [job] });
    run(startTestWorker({ backend: workerSide, tasks: [t], concurrency: 2, pollIntervalMs: 1000, leaseMs: 600 }));
    await eventually("the job running", async () => runs === 1);
    await api.cancel({ id: job.id });
    await eventually("the handler told", async () => reasons.length === 1, 5_000);
    expect(reasons).toEqual(["cancelled"]);
    await sleep(1_300);
    expect(runs).toBe(1);
    const d = await api.depths();
    expect(d.ready + d.scheduled + d.dead).toBe(0);
  });
});
