import { createMemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { describeProtocol } from "./protocol.js";
import { describeWorker } from "./worker.js";
import { describeOutcomes } from "./outcomes.js";
import { describeCancellation } from "./cancellation.js";
import { describeListing } from "./listing.js";
import { describeUnique } from "./unique.js";
import type { BackendFactory } from "./harness.js";

const memory: BackendFactory = {
  name: "memory",
  async create() {
    const backend = createMemoryBackend();
    await backend.setup();
    return { backend, cleanup: () => backend.close() };
  },
};

describeProtocol(memory);
describeListing(memory);
describeWorker(memory);
describeOutcomes(memory);
describeCancellation(memory);
describeUnique(memory);
