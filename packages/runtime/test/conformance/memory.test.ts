import { createMemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { describeProtocol } from "./protocol.js";
import { describeWorker } from "./worker.js";
import { describePriority } from "./priority.js";
import { describeOutcomes } from "./outcomes.js";
import { describeCancellation } from "./cancellation.js";
import { describeListing } from "./listing.js";
import { describeQueues } from "./queues.js";
import { describeUnique } from "./unique.js";
import { describeLimits } from "./limits.js";
import { describeRetention } from "./retention.js";
import { describeFlows } from "./flows.js";
import { describeResults } from "./results.js";
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
describeWorker(memory);
describePriority(memory);
describeOutcomes(memory);
describeCancellation(memory);
describeQueues(memory);
describeUnique(memory);
describeLimits(memory);
describeRetention(memory);
describeResults(memory);
describeFlows(memory);
