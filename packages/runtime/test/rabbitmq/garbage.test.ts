import { afterEach, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import { defineTask } from "../../src/core/define-task.js";
import type { RabbitMqBackend } from "../../src/backends/rabbitmq/rabbitmq-backend.js";
import type { Worker } from "../../src/worker/worker.js";
import { dropQueue, openBackend, startWorker, uniqueQueue, withRawChannel } from "./rabbitmq-test-env.js";

let backend: RabbitMqBackend | null = null;
let queue = "";
const workers: Worker[] = [];

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 0 })));
  await backend?.close();
  backend = null;
  await dropQueue(queue);
});

describe("rabbitmq: messages that are not jobs", () => {
  it("dead-letters garbage published straight to the work queue with a clear error, and keeps consuming", async () => {
    queue = uniqueQueue("garbage");
    backend = await openBackend(queue);
    const ran: string[] = [];
    const good = defineTask("garbage.good", async (_p, { job }) => {
      ran.push(job.id);
    });
    workers.push(startWorker(backend, [good], { concurrency: 2 }));

    const garbage: Array<{ body: Buffer; messageId?: string }> = [
      { body: Buffer.from("this is not json"), messageId: "garbage-text" },
      { body: Buffer.from("[1,2,3]") },
      { body: Buffer.from(JSON.stringify({ hello: "world" })) },
      { body: Buffer.from(JSON.stringify({ id: "typed-wrong", task: "garbage.good", attempts: "many" })), messageId: "typed-wrong" },
      { body: Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x00]), messageId: "binary" },
      { body: Buffer.alloc(0) },
    ];
    await withRawChannel(async (channel) => {
      for (const g of garbage) channel.sendToQueue(queue, g.body, g.messageId ? { messageId: g.messageId, persistent: true } : { persistent: true });
      // A job after the garbage: the consumer must still be alive to run it.
      const after = new Job({ task: "garbage.good", payload: {}, id: "after-the-garbage", tenantId: null });
      channel.sendToQueue(queue, Buffer.from(JSON.stringify(after.toJSON())), { persistent: true });
      await new Promise((resolve) => setTimeout(resolve, 50));
    });

    const dead = await eventually(async () => {
      const list = await backend!.listDead({ limit: 50 });
      return list.length === garbage.length && ran.length === 1 ? list : null;
    });
    expect(ran).toEqual(["after-the-garbage"]);
    for (const d of dead) {
      // The same name, class and reason as a corrupt job on Redis.
      expect(d.job.task).toBe("jfast.corrupt_job");
      expect(d.lastError).toMatchObject({ class: "CorruptJob", reason: "corrupt job" });
      expect(d.lastError!.message).toContain(`on queue "${queue}" is not a jfast job`);
    }
    const byId = new Map(dead.map((d) => [d.job.id, d]));
    expect(byId.get("garbage-text")!.lastError!.message).toContain("the body is not JSON");
    expect(byId.get("garbage-text")!.job.payload).toMatchObject({ body: "this is not json", encoding: "utf8", routingKey: queue });
    expect(byId.get("typed-wrong")!.lastError!.message).toContain(`"attempts" must be a number`);
    expect(byId.get("binary")!.job.payload).toMatchObject({ body: Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x00]).toString("base64"), encoding: "base64" });
    expect(await backend.depths()).toMatchObject({ ready: 0, running: 0, dead: garbage.length });

    // An operator can throw them away by the ids the list shows.
    const discarded = await backend.discardDead({ ids: dead.map((d) => d.job.id) });
    expect(discarded.missing).toEqual([]);
    expect((await backend.depths()).dead).toBe(0);
  });

  it("lists garbage published straight to the dead queue under a stable id", async () => {
    queue = uniqueQueue("dead-garbage");
    backend = await openBackend(queue);
    await withRawChannel(async (channel) => {
      channel.sendToQueue(`${queue}.dead`, Buffer.from("junk in the dead queue"), { persistent: true });
      await new Promise((resolve) => setTimeout(resolve, 50));
    });
    const first = await backend.listDead({ limit: 5 });
    const second = await backend.listDead({ limit: 5 });
    expect(first).toHaveLength(1);
    expect(first[0]!.job.id).toMatch(/^unreadable-[0-9a-f]{24}$/);
    expect(second[0]!.job.id).toBe(first[0]!.job.id);
    expect((await backend.discardDead({ ids: [first[0]!.job.id] })).discarded).toEqual([first[0]!.job.id]);
  });
});

async function eventually<T>(check: () => Promise<T | null>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
