import { createMemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { describeStats } from "./stats.js";
import { describeProtocol } from "./protocol.js";
import { describeWorker } from "./worker.js";
import { describePriority } from "./priority.js";
import { describeOutcomes } from "./outcomes.js";
import { describeCancellation } from "./cancellation.js";
import { describeListing } from "./listing.js";
import { describeJobUpdate } from "./job-update.js";
import { describeQueues } from "./queues.js";
import { describeUnique } from "./unique.js";
import { describeLimits } from "./limits.js";
import { describeKeyLimits } from "./key-limits.js";
import { describeFairShare } from "./fair-share.js";
import { describeKeyedDepths } from "./keyed-depths.js";
import { describeOrderPerKey } from "./order-per-key.js";
import { describeRetention } from "./retention.js";
import { describeWorkers } from "./workers.js";
import { describeFlows } from "./flows.js";
import { describeResults } from "./results.js";
import { describeDeadlines } from "./deadlines.js";
import { describeDebounce } from "./debounce.js";
import { describeJobLife } from "./job-life.js";
import type { BackendFactory } from "./harness.js";
import { capabilities } from "../../src/backends/memory/capabilities.js";

const memory: BackendFactory = {
  name: "memory",
  capabilities,
  async create() {
    const backend = createMemoryBackend();
    await backend.setup();
    return { backend, cleanup: () => backend.close() };
  },
  /** One memory backend per named queue: the structures of one queue are its own. */
  async createQueues(names) {
    const backends = Object.fromEntries(names.map((name) => [name, createMemoryBackend()]));
    for (const backend of Object.values(backends)) await backend.setup();
    return { backends, cleanup: async () => void (await Promise.all(Object.values(backends).map((b) => b.close()))) };
  },
};

describeProtocol(memory);
describeListing(memory);
describeJobUpdate(memory);
describeWorker(memory);
describePriority(memory);
describeOutcomes(memory);
describeCancellation(memory);
describeQueues(memory);
describeUnique(memory);
describeLimits(memory);
describeKeyLimits(memory);
describeFairShare(memory);
describeKeyedDepths(memory);
describeOrderPerKey(memory);
describeRetention(memory);
describeResults(memory);
describeDeadlines(memory);
describeDebounce(memory);
describeJobLife(memory);
describeFlows(memory);
describeWorkers(memory);

/** The memory queue's history lives in its one process. */
describeStats(memory, async () => ({
  durable: false,
  async process() {
    const backend = createMemoryBackend();
    return { backend, database: null, queue: "jfast.jobs", close: () => backend.close() };
  },
  async cleanup() {},
}));
