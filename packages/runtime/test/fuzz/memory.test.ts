import { createMemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { describeFuzz } from "./describe-fuzz.js";
import { QUEUE_TUNING } from "./fuzz-app.js";

describeFuzz({
  name: "memory",
  ciRuns: 100,
  async setup() {
    const backend = createMemoryBackend();
    return { plugins: ["queue"], sections: `[plugin.queue]\nbackend = "memory"\n${QUEUE_TUNING}`, backend, cleanup: async () => {} };
  },
});
