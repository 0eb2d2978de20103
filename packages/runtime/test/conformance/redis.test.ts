import { describeProtocol } from "./protocol.js";
import { describeStats } from "./stats.js";
import { describeWorker } from "./worker.js";
import { describePriority } from "./priority.js";
import { describeOutcomes } from "./outcomes.js";
import { describeCancellation } from "./cancellation.js";
import { describeListing } from "./listing.js";
import { describeJobUpdate } from "./job-update.js";
import { describeQueues } from "./queues.js";
import { backendQueueName } from "../../src/core/named-queue.js";
import { describeUnique } from "./unique.js";
import { describeLimits } from "./limits.js";
import { describeKeyLimits } from "./key-limits.js";
import { describeFairShare } from "./fair-share.js";
import { describeKeyedDepths } from "./keyed-depths.js";
import { describeOrderPerKey } from "./order-per-key.js";
import { describeRetention } from "./retention.js";
import { describeResults } from "./results.js";
import { describeDeadlines } from "./deadlines.js";
import { describeDebounce } from "./debounce.js";
import { describeJobLife } from "./job-life.js";
import { describeWorkers } from "./workers.js";
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
describeJobUpdate(redis);
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
describeKeyLimits(withPeers);
describeFairShare(withPeers);
describeKeyedDepths(withPeers);
describeOrderPerKey(withPeers);
describeRetention(withPeers);
describeResults(withPeers);
describeDeadlines(withPeers);
describeDebounce(withPeers);
describeJobLife(withPeers);
describeFlows(withPeers);
describeWorkers(withPeers);

/** The queue's own keys (a hash per minute and per hour); each process a backend with connections of its own. */
describeStats(redis, async () => {
  const queue = uniqueQueue("stats");
  return {
    durable: true,
    async process() {
      const backend = await openBackend(queue);
      return { backend, database: null, queue, close: () => backend.close() };
    },
    cleanup: () => dropQueue(queue),
  };
});
