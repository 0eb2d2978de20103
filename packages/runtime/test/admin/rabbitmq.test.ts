import { afterEach, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import { AMQP_URL, dropQueue, uniqueQueue } from "../rabbitmq/rabbitmq-test-env.js";
import { QUEUE_TUNING, VIEWER, call, startAdminApp, type AdminApp } from "./admin-harness.js";
import { describeAdminRouter } from "./admin-router.js";

const setup = async () => {
  const queue = uniqueQueue("admin");
  return {
    plugins: ["queue"],
    sections: `[plugin.queue]\nbackend = "rabbitmq"\nurl = "${AMQP_URL}"\nname = "${queue}"\n${QUEUE_TUNING}`,
    cleanup: () => dropQueue(queue),
  };
};

/** The real RabbitMQ, a queue of its own per test; no database, so the audit trail is in memory and the logs. */
describeAdminRouter("rabbitmq", setup, "memory");

describe("rabbitmq: admin router, what the broker cannot show", () => {
  let app: AdminApp | null = null;
  afterEach(async () => {
    await app?.close();
    app = null;
  });

  it("answers a waiting job's lookup with no job and the reason, not an error", async () => {
    app = await startAdminApp({ setup });
    const waiting = new Job({ task: "billing.charge", payload: { invoice: "later" }, delayMs: 60_000 });
    await app.jfast.require("queue").enqueue(waiting);
    const { status, data } = await call(app.jfast, "jobs.get", { token: VIEWER, input: { id: waiting.id } });
    expect(status).toBe(200);
    expect(data).toMatchObject({ enabled: true, job: null });
    expect(data.notFoundReason).toMatch(/RabbitMQ cannot look up a waiting message by id/);
  });
});
