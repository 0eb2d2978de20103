import { describeProtocol } from "./protocol.js";
import { describeWorker } from "./worker.js";
import { describePriority } from "./priority.js";
import { describeOutcomes } from "./outcomes.js";
import { describeCancellation } from "./cancellation.js";
import { describeListing } from "./listing.js";
import { describeQueues } from "./queues.js";
import { backendQueueName } from "../../src/core/named-queue.js";
import { describeUnique } from "./unique.js";
import { describeLimits } from "./limits.js";
import { describeRetention } from "./retention.js";
import { describeResults } from "./results.js";
import { describeFlows } from "./flows.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import type { BackendFactory } from "./harness.js";
import { capabilities } from "../../src/backends/redis/capabilities.js";
import { dropQueue, openBackend, uniqueQueue } from "../redis/redis-test-env.js";

const redis: BackendFactory = {
  name: "redis",
  capabilities,
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
  /** The service's named queues: each under its own hash tag, `{<base>:<name>}` (the default's is `{<base>}`). */
  async createQueues(names) {
    const base = uniqueQueue("conformance");
    const queues = names.map((name) => ({ name, queue: backendQueueName(base, name) }));
    const backends = Object.fromEntries(await Promise.all(queues.map(async (q) => [q.name, await openBackend(q.queue)] as const)));
    return {
      backends,
      async cleanup() {
        for (const backend of Object.values(backends)) await backend.close();
        for (const q of queues) await dropQueue(q.queue);
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
describeQueues(redis);

/** Unique jobs, task limits and retention, with peers: backends on the same queue, each with connections of its own. */
const withPeers: BackendFactory = {
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
};
describeUnique(withPeers);
describeLimits(withPeers);
describeRetention(withPeers);
describeResults(withPeers);
describeFlows(withPeers);
