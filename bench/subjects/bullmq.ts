/** BullMQ with removeOnComplete (its documented setting for throughput: no completed set to grow). */
import { randomBytes } from "node:crypto";
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { dropRedisKeys } from "../lib/cleanup.js";
import { probe, services, timePickup, waitDone, type Subject } from "../lib/subject.js";
import { packageVersion } from "./package-version.js";

const version = packageVersion("bullmq");
const CHUNK = 5000;
const jobOptions = { removeOnComplete: true, removeOnFail: true };

export function bullmqSubject(): Subject {
  const prefix = `bullbench${randomBytes(4).toString("hex")}`;
  const connection = () => new Redis(services.redis, { maxRetriesPerRequest: null });
  let queue: Queue;
  let idle: Worker | null = null;
  const start = async (concurrency: number) => {
    const worker = new Worker("noop", async () => probe.hit(), { connection: connection(), prefix, concurrency, removeOnComplete: { count: 0 } });
    await worker.waitUntilReady();
    return worker;
  };
  return {
    label: `BullMQ ${version}`,
    settings: "removeOnComplete, addBulk, one Worker",
    async setup() {
      queue = new Queue("noop", { connection: connection(), prefix });
      await queue.waitUntilReady();
    },
    async enqueue(count) {
      for (let i = 0; i < count; i += CHUNK) {
        await queue.addBulk(Array.from({ length: Math.min(CHUNK, count - i) }, () => ({ name: "noop", data: {}, opts: jobOptions })));
      }
    },
    async drain(count, concurrency) {
      const target = probe.done + count;
      const worker = await start(concurrency);
      await waitDone(target);
      await worker.close();
    },
    async startIdle() {
      idle = await start(10);
    },
    pickupOne: () => timePickup(() => queue.add("noop", {}, jobOptions)),
    async stopIdle() {
      await idle?.close();
      idle = null;
    },
    async teardown() {
      await queue?.close();
      await dropRedisKeys(`${prefix}:*`);
    },
  };
}
