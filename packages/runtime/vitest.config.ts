import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Service-backed suites isolate themselves by namespace; files run in parallel on 2 cores.
    fileParallelism: true,
    maxWorkers: 2,
  },
});
