import { describeProtocol } from "./protocol.js";
import { describeWorker } from "./worker.js";
import { describePriority } from "./priority.js";
import { describeOutcomes } from "./outcomes.js";
import { describeCancellation } from "./cancellation.js";
import { describeListing } from "./listing.js";
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
describePriority(redis);
describeOutcomes(redis);
describeCancellation(redis);
