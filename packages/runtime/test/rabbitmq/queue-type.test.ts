import { afterEach, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import type { RabbitMqBackend } from "../../src/backends/rabbitmq/rabbitmq-backend.js";
import { levelQueueArguments, QueueType } from "../../src/backends/rabbitmq/topology.js";
import { JfastError } from "../../src/errors/jfast-error.js";
import { argumentsOf, listQueues } from "./rabbitmqctl.js";
import { collectArrivals, dropQueue, openBackend, uniqueQueue } from "./rabbitmq-test-env.js";

/** [plugin.queue] queue_type on the machine's single node: what is declared, and a queue of the other type. */
const LEVELS = 4;
const open: RabbitMqBackend[] = [];
const queues: string[] = [];

async function track(queue: string, type: QueueType): Promise<RabbitMqBackend> {
  if (!queues.includes(queue)) queues.push(queue);
  const backend = await openBackend(queue, { queueType: type, delay: { levels: LEVELS, unitMs: 100 } });
  open.push(backend);
  return backend;
}

afterEach(async () => {
  for (const backend of open.splice(0)) await backend.close();
  for (const queue of queues.splice(0)) await dropQueue(queue, LEVELS);
});

describe("rabbitmq: queue types", () => {
  it("refuses a job with a priority on a quorum queue (NOT_SUPPORTED), and takes the same batch at the default", async () => {
    const queue = uniqueQueue("quorum-priority");
    const backend = await track(queue, QueueType.quorum);
    const urgent = new Job({ task: "t.urgent", priority: 0, payload: {} });
    const error = await backend.enqueue({ jobs: [new Job({ task: "t.plain", payload: {} }), urgent] }).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(JfastError);
    expect(error).toMatchObject({ code: "NOT_SUPPORTED" });
    expect((error as Error).message).toContain("quorum queues deliver in arrival order and keep no message priority");
    const plain = new Job({ task: "t.plain", payload: {} });
    expect((await backend.enqueue({ jobs: [plain] })).inserted).toEqual([plain.id]);
  });

  it("declares the work queue, the dead queue and every level as quorum queues, the levels dead-lettering at least once", async () => {
    const queue = uniqueQueue("quorum-topology");
    const backend = await track(queue, QueueType.quorum);
    const listed = new Map((await listQueues(queue)).map((q) => [q.name, argumentsOf(q)]));
    expect(listed.get(queue)).toEqual({ "x-queue-type": "quorum" });
    expect(listed.get(`${queue}.dead`)).toEqual({ "x-queue-type": "quorum" });
    for (let level = 0; level < LEVELS; level++) {
      const args = listed.get(`${queue}.delay.${level}`)!;
      expect(args).toEqual(levelQueueArguments(backend.names, backend.shape, level, QueueType.quorum));
      expect(args).toMatchObject({ "x-queue-type": "quorum", "x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish" });
    }
    // A delayed job rides the quorum cascade to the work queue.
    const job = new Job({ task: "t.delayed", delayMs: 500, payload: {} });
    await backend.enqueue({ jobs: [job] });
    const [arrival] = await collectArrivals(backend, 1, 10_000);
    expect(arrival!.job.id).toBe(job.id);
    expect(arrival!.at - job.availableAt.getTime()).toBeGreaterThanOrEqual(-5);
  });

  it("declares classic queues without x-queue-type by default, as before the setting existed (the work queue a priority queue)", async () => {
    const queue = uniqueQueue("classic-topology");
    await track(queue, QueueType.classic);
    const listed = new Map((await listQueues(queue)).map((q) => [q.name, argumentsOf(q)]));
    expect(listed.get(queue)).toEqual({ "x-max-priority": 9 });
    expect(listed.get(`${queue}.dead`)).toEqual({});
    expect(listed.get(`${queue}.delay.1`)).not.toHaveProperty("x-queue-type");
  });

  for (const [held, wanted] of [
    [QueueType.classic, QueueType.quorum],
    [QueueType.quorum, QueueType.classic],
  ] as const) {
    it(`refuses to declare a ${held} queue as ${wanted}, naming both types and how to move`, async () => {
      const queue = uniqueQueue(`held-${held}`);
      await track(queue, held);
      const error = (await track(queue, wanted).catch((e: unknown) => e)) as JfastError;
      expect(error).toBeInstanceOf(JfastError);
      expect(error.code).toBe("RABBITMQ_TOPOLOGY_MISMATCH");
      expect(error.message).toContain(`as a ${held} queue, but this configuration declares it ${wanted}`);
      expect(error.hint).toContain(`new name ([plugin.queue] name) with queue_type = "${wanted}"`);
      expect(error.hint).toContain(`queue_type = "${held}"`);
      expect(error.docs).toBe("jfast docs rabbitmq#moving-to-quorum-queues");
      // The held type still declares fine.
      await track(queue, held);
    });
  }
});
