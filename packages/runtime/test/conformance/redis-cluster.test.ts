import { describeProtocol } from "./protocol.js";
import { describeWorker } from "./worker.js";
import { describeListing } from "./listing.js";
import { describeJobUpdate } from "./job-update.js";
import { describeQueues } from "./queues.js";
import { backendQueueName } from "../../src/core/named-queue.js";
import { describePriority } from "./priority.js";
import { describeUnique } from "./unique.js";
import { describeWorkers } from "./workers.js";
import { describeFlows } from "./flows.js";
import { describeResults } from "./results.js";
import { describeDeadlines } from "./deadlines.js";
import { describeDebounce } from "./debounce.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import type { BackendFactory } from "./harness.js";
import { capabilities } from "../../src/backends/redis/capabilities.js";
import { dropQueue, openBackend, uniqueQueue } from "../redis/redis-test-env.js";
import { redisCluster } from "../redis/redis-cluster-env.js";

const cluster = redisCluster();

const factory: BackendFactory = {
  name: "redis-cluster",
  capabilities,
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
  /** The service's named queues: each under its own hash tag, `{<base>:<name>}` (the default's is `{<base>}`). */
  async createQueues(names) {
    const base = uniqueQueue("conformance");
    const queues = names.map((name) => ({ name, queue: backendQueueName(base, name) }));
    const backends = Object.fromEntries(await Promise.all(queues.map(async (q) => [q.name, await openBackend(q.queue, {}, cluster)] as const)));
    return {
      backends,
      async cleanup() {
        for (const backend of Object.values(backends)) await backend.close();
        for (const q of queues) await dropQueue(q.queue, undefined, cluster);
      },
    };
  },
};

describeProtocol(factory);
describeListing(factory);
describeJobUpdate(factory);
describeWorker(factory);
describeQueues(factory);
describePriority(factory);
describeResults(factory);

/** Peers: backends on the same queue, each with connections of its own (standing for other processes). */
const withPeers: BackendFactory = {
  ...factory,
  async create() {
    const queue = uniqueQueue("conformance");
    const backend = await openBackend(queue, {}, cluster);
    const opened: QueueBackend[] = [];
    return {
      backend,
      async peer() {
        const other = await openBackend(queue, {}, cluster);
        opened.push(other);
        return other;
      },
      async cleanup() {
        for (const other of opened) await other.close();
        await backend.close();
        await dropQueue(queue, undefined, cluster);
      },
    };
  },
};

/** Unique jobs on the cluster: the key lives in the queue's slot. */
describeUnique(withPeers);
/** Deadlines and debounce on the cluster: their sorted set and keys live in the queue's slot. */
describeDeadlines(withPeers);
describeDebounce(withPeers);
/** Flows: every key of a flow in the queue's slot, its fan-in in the script of the outcome. */
describeFlows(withPeers);
/** The worker registry: one hash in the queue's slot. */
describeWorkers(withPeers);
