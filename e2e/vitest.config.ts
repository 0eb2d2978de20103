import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["**/*.test.ts"],
    // The dashboard's browser suite runs on Playwright's runner (playwright.config.ts).
    exclude: ["node_modules/**", "dashboard/**"],
    // Real processes on a machine that may be busy: generous bounds, never performance claims.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    fileParallelism: true,
    maxWorkers: 2,
  },
});
