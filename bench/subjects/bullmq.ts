/** BullMQ with removeOnComplete (its documented setting for throughput: no completed set to grow). */
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { dropRedisKeys } from "../lib/cleanup.js";
import { redisPersistence } from "../lib/server-settings.js";
import { probe, services, singleProcess, waitDone, type Subject, type SubjectContext } from "../lib/subject.js";
import { packageVersion } from "./package-version.js";

const version = packageVersion("bullmq");
const CHUNK = 5000;
const jobOptions = { removeOnComplete: true, removeOnFail: true };

/**
 * `redis`: another server than the shared one (a private one with persistence), and what the label adds for it.
 * The Queue that enqueues and each Worker have connections of their own, so a job reaches the Worker through
 * Redis whoever enqueues it: its pickup is already the pickup of a job enqueued elsewhere.
 */
export function bullmqSubject(options: { redis?: { url: string; label: string } } = {}, context: SubjectContext = singleProcess()): Subject {
  const prefix = `bullbench${context.namespace}`;
  const url = options.redis?.url ?? services.redis;
  let persistence = "";
  const connection = () => new Redis(url, { maxRetriesPerRequest: null });
  let queue: Queue;
  let idle: Worker | null = null;
  const start = async (concurrency: number) => {
    const worker = new Worker("noop", async () => probe.hit(), { connection: connection(), prefix, concurrency, removeOnComplete: { count: 0 } });
    await worker.waitUntilReady();
    return worker;
  };
  return {
    label: `BullMQ ${version}${options.redis ? `, ${options.redis.label}` : ""}`,
    get settings() {
      return `removeOnComplete, addBulk, one Worker, the Queue on a connection of its own, ${persistence}`;
    },
    async setup() {
      persistence = await redisPersistence(url);
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
    enqueueOne: () => queue.add("noop", {}, jobOptions),
    async stopIdle() {
      await idle?.close();
      idle = null;
    },
    async teardown() {
      await queue?.close();
      if (context.role !== "worker") await dropRedisKeys(`${prefix}:*`, url);
    },
  };
}
