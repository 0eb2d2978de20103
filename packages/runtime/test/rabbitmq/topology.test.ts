import { afterEach, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import type { RabbitMqBackend } from "../../src/backends/rabbitmq/rabbitmq-backend.js";
import { JfastError } from "../../src/errors/jfast-error.js";
import { argumentsOf, listBindings, listQueues } from "./rabbitmqctl.js";
import { dropQueue, openBackend, uniqueQueue, withRawChannel } from "./rabbitmq-test-env.js";

const open: Array<{ backend: RabbitMqBackend; queue: string; levels: number }> = [];

async function track(queue: string, options: Parameters<typeof openBackend>[1] = {}): Promise<RabbitMqBackend> {
  const backend = await openBackend(queue, options);
  open.push({ backend, queue, levels: options.delay?.levels ?? 25 });
  return backend;
}

afterEach(async () => {
  for (const { backend } of open) await backend.close();
  const queues = new Map(open.splice(0).map((o) => [o.queue, o.levels]));
  for (const [queue, levels] of queues) await dropQueue(queue, levels);
});

describe("rabbitmq: topology", () => {
  it("declares 25 levels, each a topic exchange and a durable queue with TTL 2^n × 100 ms, bound bit by bit", async () => {
    const queue = uniqueQueue("topology");
    await track(queue);
    const level = (n: number) => `${queue}.delay.${n}`;

    // Existence, through AMQP alone.
    await withRawChannel(async (channel) => {
      await channel.checkQueue(queue);
      await channel.checkQueue(`${queue}.dead`);
      for (let n = 0; n < 25; n++) {
        await channel.checkQueue(level(n));
        await channel.checkExchange(level(n));
      }
    });

    // Arguments and bindings, as the broker reports them.
    const queues = new Map((await listQueues(queue)).map((q) => [q.name, q]));
    expect([...queues.keys()].sort()).toEqual([queue, `${queue}.dead`, ...Array.from({ length: 25 }, (_, n) => level(n))].sort());
    for (const q of queues.values()) expect(q.durable).toBe(true);
    // The work queue is a priority queue (docs/tasks.md#priority).
    expect(argumentsOf(queues.get(queue)!)).toEqual({ "x-max-priority": 9 });
    expect(argumentsOf(queues.get(`${queue}.dead`)!)).toEqual({});
    for (let n = 0; n < 25; n++) {
      const args = argumentsOf(queues.get(level(n))!);
      expect(args["x-message-ttl"]).toBe(100 * 2 ** n);
      expect(args["x-dead-letter-exchange"]).toBe(n === 0 ? level(0) : level(n - 1));
      if (n === 0) expect(args["x-dead-letter-routing-key"]).toBe(Array(25).fill("0").join("."));
      else expect(args["x-dead-letter-routing-key"]).toBeUndefined();
    }
    expect(argumentsOf(queues.get(level(24))!)["x-message-ttl"]).toBe(1_677_721_600);

    const bindings = (await listBindings(queue)).map((b) => `${b.source_name} -> ${b.destination_kind}:${b.destination_name} [${b.routing_key}]`);
    // One word per level, most significant first: level n looks at word 24 - n.
    const pattern = (n: number, bit: string) => Array.from({ length: 25 }, (_, i) => (i === 24 - n ? bit : "*")).join(".");
    const expected: string[] = [];
    for (let n = 0; n < 25; n++) {
      expected.push(`${level(n)} -> queue:${level(n)} [${pattern(n, "1")}]`);
      expected.push(n === 0 ? `${level(0)} -> queue:${queue} [${pattern(0, "0")}]` : `${level(n)} -> exchange:${level(n - 1)} [${pattern(n, "0")}]`);
    }
    expect(bindings.sort()).toEqual(expected.sort());
  });

  it("puts a delayed job in the queue of its highest bit, and counts it as scheduled", async () => {
    const queue = uniqueQueue("routing");
    const backend = await track(queue);
    // Exactly 2^k units (the publish happens a moment after the job is made, so the remaining time rounds up to 2^k).
    for (const k of [24, 20, 10]) await backend.enqueue({ jobs: [new Job({ task: "t.delayed", delayMs: 2 ** k * 100, payload: { k } })] });
    // 2^22 + 2^12 units: waits in level 22 first, then 12.
    await backend.enqueue({ jobs: [new Job({ task: "t.delayed", delayMs: (2 ** 22 + 2 ** 12) * 100 })] });
    const counts = await withRawChannel(async (channel) => {
      const out: Record<number, number> = {};
      for (let n = 0; n < 25; n++) out[n] = (await channel.checkQueue(`${queue}.delay.${n}`)).messageCount;
      return out;
    });
    expect(Object.entries(counts).filter(([, c]) => c > 0)).toEqual([
      ["10", 1],
      ["20", 1],
      ["22", 1],
      ["24", 1],
    ]);
    expect(await backend.depths()).toMatchObject({ ready: 0, scheduled: 4 });
  });

  it("declares again without complaint, from the same or another backend", async () => {
    const queue = uniqueQueue("idempotent");
    const first = await track(queue);
    await first.setup();
    await track(queue);
    expect((await first.depths()).ready).toBe(0);
  });

  it("refuses another level count or unit under the same name, naming the fix, before creating anything", async () => {
    const queue = `${uniqueQueue("cascade")}-4x100ms`;
    await track(queue, { delay: { levels: 4, unitMs: 100 } });

    const moreLevels = openBackend(queue, { delay: { levels: 5, unitMs: 100 } });
    await expect(moreLevels).rejects.toBeInstanceOf(JfastError);
    const error = (await moreLevels.catch((e: unknown) => e)) as JfastError;
    expect(error.code).toBe("RABBITMQ_TOPOLOGY_MISMATCH");
    expect(error.hint).toMatch(/another name/);
    expect(error.docs).toBe("jfast docs rabbitmq#changing-the-cascade");
    expect(error.message).toContain("5 levels of 100 ms");

    const fewerLevels = (await openBackend(queue, { delay: { levels: 3, unitMs: 100 } }).catch((e: unknown) => e)) as JfastError;
    expect(fewerLevels.code).toBe("RABBITMQ_TOPOLOGY_MISMATCH");

    const otherUnit = (await openBackend(queue, { delay: { levels: 4, unitMs: 50 } }).catch((e: unknown) => e)) as JfastError;
    expect(otherUnit.code).toBe("RABBITMQ_TOPOLOGY_MISMATCH");
    expect(otherUnit.message).toContain("x-message-ttl");

    // Level 0 is checked first, so the refused shape left nothing behind (no level 4).
    const levelFour = await withRawChannel((channel) => channel.checkQueue(`${queue}.delay.4`).then(() => "exists", () => "missing"));
    expect(levelFour).toBe("missing");
    // The original shape still declares fine.
    await track(queue, { delay: { levels: 4, unitMs: 100 } });
  });

  it("refuses a work queue declared without priorities, naming the fix", async () => {
    const queue = uniqueQueue("unprioritised");
    // As a version before job priorities left it: a plain durable queue.
    await withRawChannel((channel) => channel.assertQueue(queue, { durable: true }));
    try {
      const error = (await openBackend(queue).catch((e: unknown) => e)) as JfastError;
      expect(error).toBeInstanceOf(JfastError);
      expect(error.code).toBe("RABBITMQ_TOPOLOGY_MISMATCH");
      expect(error.message).toContain("x-max-priority");
      expect(error.hint).toMatch(/priority queue/);
      expect(error.hint).toContain(`rabbitmqctl delete_queue ${queue}`);
      expect(error.docs).toBe("jfast docs rabbitmq#priority-queue");
    } finally {
      await dropQueue(queue);
    }
  });
});
