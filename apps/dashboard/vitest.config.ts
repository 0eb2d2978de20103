import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Pure logic only (no browser, no services): the browser tests are in e2e/dashboard.
export default defineConfig({
  resolve: { alias: { "~": fileURLToPath(new URL("./src", import.meta.url)) } },
  test: { include: ["src/**/*.test.ts"] },
});
