import { describe, expect, it } from "vitest";
import { createMemoryBackend } from "../backends/memory/memory-backend.js";
import { defineTask } from "../core/define-task.js";
import { Job } from "../core/job.js";
import type { QueueBackend, SlotOffer } from "../core/queue-backend.js";
import { createLogger } from "../observability/logger.js";
import { eventually } from "../testing/eventually.js";
import { Worker } from "./worker.js";

/**
 * Slots an idle worker reserved for an in-process hand-off stay reserved while the hand-off's insert is in
 * flight: a claim the worker makes meanwhile (woken by other jobs) neither takes them nor starts its jobs in
 * them, and the handed-over jobs start first when they arrive. (The memory backend, with the slot offer of a
 * backend that hands over, as PostgreSQL does.)
 */
describe("worker: slots reserved by a hand-off", () => {
  it("are kept for the handed-over jobs, which start before jobs claimed while their insert was in flight", async () => {
    const memory = createMemoryBackend();
    let offer: SlotOffer | null = null;
    const backend: QueueBackend = Object.assign(Object.create(memory) as QueueBackend, {
      capabilities: { ...memory.capabilities, handOff: true },
      offerSlots: (o: SlotOffer) => {
        offer = o;
        return () => {
          offer = null;
        };
      },
    });
    const started: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const work = defineTask("slots.work", async (payload: { name: string }) => {
      started.push(payload.name);
      await gate;
    });
    const worker = new Worker({
      backend,
      lookup: (name) => (name === work.name ? work : undefined),
      execute: (definition, job, cancellation) =>
        Promise.resolve(definition.handler(job.payload, { ctx: { serviceName: "slots", require: <T,>() => undefined as T }, job, session: undefined, signal: cancellation.signal, locals: {}, progress: () => undefined, log: { info() {}, warn() {}, error() {} } })),
      logger: createLogger({ service: "slots", level: "silent" }),
      concurrency: 2,
      leaseMs: 30_000,
      backoffBaseMs: 50,
      pollIntervalMs: 60_000,
      defaultMaxAttempts: 3,
    });
    worker.start();
    let reserved: SlotOffer | null = null;
    try {
      await eventually("the worker to go idle", () => offer !== null, { intervalMs: 5 });
      const handOff = offer!;
      // An enqueue next to the idle worker reserves both slots; its insert is "in flight" from here on.
      expect(handOff.reserve(2)).toBe(2);
      reserved = handOff;
      // Meanwhile other jobs arrive through the table and wake the worker, which claims them.
      await memory.enqueue({ jobs: ["late-1", "late-2", "late-3"].map((name) => new Job({ task: "slots.work", payload: { name } })) });
      await eventually("the worker to wake up and claim", () => offer === null, { intervalMs: 5 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(started).toEqual([]);
      // The insert commits: the handed-over jobs, claimed by the worker, arrive and take their slots.
      const handed = [new Job({ task: "slots.work", payload: { name: "handed-1" } }), new Job({ task: "slots.work", payload: { name: "handed-2" } })];
      await memory.enqueue({ jobs: handed });
      const claimed = await memory.claim({ workerId: worker.id, limit: 5, leaseMs: 30_000 });
      const mine = claimed.filter((job) => (job.payload as { name: string }).name.startsWith("handed"));
      expect(mine).toHaveLength(2);
      handOff.deliver(mine, 2);
      reserved = null;
      await eventually("two handlers", () => started.length === 2, { intervalMs: 5 });
      expect(started).toEqual(["handed-1", "handed-2"]);
    } finally {
      // A reservation is always delivered or cancelled (shutdown waits for it); a failed assertion above must not hang.
      reserved?.cancel(2);
      release();
      await worker.stop({ graceMs: 1000 });
    }
  });
});
