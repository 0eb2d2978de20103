import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // The loopback clusters a run starts for itself are stopped when it ends (test/stop-started-clusters.ts).
    globalSetup: ["test/stop-started-clusters.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Service-backed suites isolate themselves by namespace; files run in parallel on 2 cores.
    fileParallelism: true,
    maxWorkers: 2,
  },
});
