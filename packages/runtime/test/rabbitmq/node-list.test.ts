import { afterEach, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import type { RabbitMqBackend } from "../../src/backends/rabbitmq/rabbitmq-backend.js";
import { nodeUrls } from "../../src/backends/rabbitmq/connection.js";
import { AMQP_URL, collectArrivals, dropQueue, openBackend, uniqueQueue } from "./rabbitmq-test-env.js";

/** A port nothing listens on: a node that is down. */
const DOWN = "amqp://guest:guest@127.0.0.1:9";
let backend: RabbitMqBackend | null = null;
let queue = "";

afterEach(async () => {
  await backend?.close();
  backend = null;
  if (queue) await dropQueue(queue);
  queue = "";
});

describe("rabbitmq: a url listing several nodes", () => {
  it("splits on commas, ignoring blanks around them", () => {
    expect(nodeUrls(" amqp://a:5672 , amqp://b:5672,,")).toEqual(["amqp://a:5672", "amqp://b:5672"]);
    expect(nodeUrls("amqp://a:5672")).toEqual(["amqp://a:5672"]);
  });

  it("connects to the next node at once when the first is down, and works there", async () => {
    queue = uniqueQueue("node-list");
    const warnings: Array<{ message: string; fields?: Record<string, unknown> }> = [];
    const started = Date.now();
    backend = await openBackend(queue, {
      url: `${DOWN},${AMQP_URL}`,
      logger: { warn: (message, fields) => warnings.push({ message, ...(fields ? { fields } : {}) }), error: () => undefined },
    });
    // No back-off between the nodes of one round: the refused node costs one failed connect.
    expect(Date.now() - started).toBeLessThan(5000);
    expect(warnings.map((w) => [w.message, String(w.fields?.url).replace(/\?.*/, "")])).toEqual([
      ["cannot reach RabbitMQ; retrying", "amqp://guest:***@127.0.0.1:9"],
      ["reconnected to RabbitMQ", "amqp://guest:***@127.0.0.1:5672"],
    ]);
    const job = new Job({ task: "t.any", payload: {} });
    await backend.enqueue({ jobs: [job] });
    expect((await collectArrivals(backend, 1, 10_000))[0]!.job.id).toBe(job.id);
  });
});
