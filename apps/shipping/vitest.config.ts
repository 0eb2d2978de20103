import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["**/*.test.ts"],
    exclude: ["node_modules/**"],
    // Real Redis and Kafka on a machine that may be busy: generous bounds, never performance claims.
    testTimeout: 90_000,
    hookTimeout: 60_000,
  },
});
