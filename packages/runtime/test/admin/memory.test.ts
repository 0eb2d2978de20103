import { createMemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { QUEUE_TUNING } from "./admin-harness.js";
import { describeAdminRouter } from "./admin-router.js";

describeAdminRouter(
  "memory",
  async () => {
    const backend = createMemoryBackend();
    return { plugins: ["queue"], sections: `[plugin.queue]\nbackend = "memory"\n${QUEUE_TUNING}`, backend, cleanup: async () => {} };
  },
  "memory",
);
