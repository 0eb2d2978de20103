import { createMemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { describeAdminRouter } from "./admin-router.js";

describeAdminRouter("memory", async () => {
  const backend = createMemoryBackend();
  return { backend, cleanup: () => backend.close() };
});
