import { describeProtocol } from "./protocol.js";
import { describeWorker } from "./worker.js";
import { describeOutcomes } from "./outcomes.js";
import { describeCancellation } from "./cancellation.js";
import { describeListing } from "./listing.js";
import { describeUnique } from "./unique.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import type { BackendFactory } from "./harness.js";
import { dropQueue, openBackend, uniqueQueue } from "../redis/redis-test-env.js";

const redis: BackendFactory = {
  listableStates: ["ready", "scheduled", "running", "completed", "dead"],
  name: "redis",
  async create() {
    const queue = uniqueQueue("conformance");
    const backend = await openBackend(queue);
    return {
      backend,
      async cleanup() {
        await backend.close();
        await dropQueue(queue);
      },
    };
  },
};

describeProtocol(redis);
describeListing(redis);
describeWorker(redis);
describeOutcomes(redis);
describeCancellation(redis);

/** Unique jobs, with peers: backends on the same queue, each with connections of its own. */
describeUnique({
  ...redis,
  async create() {
    const queue = uniqueQueue("conformance");
    const backend = await openBackend(queue);
    const opened: QueueBackend[] = [];
    return {
      backend,
      async peer() {
        const other = await openBackend(queue);
        opened.push(other);
        return other;
      },
      async cleanup() {
        for (const other of opened) await other.close();
        await backend.close();
        await dropQueue(queue);
      },
    };
  },
});
