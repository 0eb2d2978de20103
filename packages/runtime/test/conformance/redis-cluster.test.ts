import { describeProtocol } from "./protocol.js";
import { describeWorker } from "./worker.js";
import { describeListing } from "./listing.js";
import { describePriority } from "./priority.js";
import type { BackendFactory } from "./harness.js";
import { dropQueue, openBackend, uniqueQueue } from "../redis/redis-test-env.js";
import { redisCluster } from "../redis/redis-cluster-env.js";

const cluster = redisCluster();

const factory: BackendFactory = {
  listableStates: ["ready", "scheduled", "running", "completed", "dead"],
  name: "redis-cluster",
  async create() {
    const queue = uniqueQueue("conformance");
    const backend = await openBackend(queue, {}, cluster);
    return {
      backend,
      async cleanup() {
        await backend.close();
        await dropQueue(queue, undefined, cluster);
      },
    };
  },
};

describeProtocol(factory);
describeListing(factory);
describeWorker(factory);
describePriority(factory);
