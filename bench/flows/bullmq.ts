/**
 * BullMQ's flows (FlowProducer): a parent job waits for its children, so a fan-in is a parent with `width`
 * children and a chain is a parent with one child, nested. Jobs are removed on completion (removeOnComplete):
 * a child's return value is kept in its parent's own hash, which is what getChildrenValues reads.
 */
import { FlowProducer, Queue, Worker, type FlowJob } from "bullmq";
import { Redis } from "ioredis";
import { dropRedisKeys } from "../lib/cleanup.js";
import { probe, services } from "../lib/subject.js";
import { packageVersion } from "../subjects/package-version.js";
import { joinStarted, type FlowSubject } from "./subject.js";

const QUEUE = "flows";
const opts = { removeOnComplete: true, removeOnFail: true };
/** Flows per FlowProducer.addBulk call (one MULTI of every job's script). */
const BULK = 500;

export function bullmqFlowSubject(namespace: string): FlowSubject {
  const prefix = `bullbench${namespace}`;
  const connection = () => new Redis(services.redis, { maxRetriesPerRequest: null });
  let queue: Queue;
  let producer: FlowProducer;
  const noop = (name: string): FlowJob => ({ name, queueName: QUEUE, data: {}, opts });
  const addBulk = async (count: number, make: () => FlowJob) => {
    for (let i = 0; i < count; i += BULK) await producer.addBulk(Array.from({ length: Math.min(BULK, count - i) }, make));
  };
  return {
    label: `BullMQ ${packageVersion("bullmq")} FlowProducer`,
    settings: `FlowProducer.addBulk (${BULK} flows a call), one Worker, removeOnComplete; the join calls getChildrenValues (as a jfast join reads its parents' results); plain jobs by Queue.addBulk`,
    async setup() {
      queue = new Queue(QUEUE, { connection: connection(), prefix });
      producer = new FlowProducer({ connection: connection(), prefix });
      await queue.waitUntilReady();
      await producer.waitUntilReady();
    },
    async enqueuePlain(count) {
      for (let i = 0; i < count; i += 5000) await queue.addBulk(Array.from({ length: Math.min(5000, count - i) }, () => ({ name: "noop", data: {}, opts })));
    },
    async enqueueChains(count, length) {
      const chain = (): FlowJob => {
        let job = noop("s0");
        for (let i = 1; i < length; i++) job = { ...noop(`s${i}`), children: [job] };
        return job;
      };
      await addBulk(count, chain);
    },
    async enqueueFanIns(count, width) {
      const fanIn = (): FlowJob => ({ ...noop("join"), children: Array.from({ length: width }, (_, i) => noop(`p${i}`)) });
      if (count === 1) await producer.add(fanIn());
      else await addBulk(count, fanIn);
    },
    async startWorker(concurrency) {
      const worker = new Worker(
        QUEUE,
        async (job) => {
          if (job.name === "join") {
            await job.getChildrenValues();
            joinStarted();
          }
          probe.hit();
        },
        { connection: connection(), prefix, concurrency, removeOnComplete: { count: 0 } },
      );
      await worker.waitUntilReady();
      return () => worker.close();
    },
    async teardown() {
      await producer?.close();
      await queue?.close();
      await dropRedisKeys(`${prefix}:*`);
    },
  };
}
