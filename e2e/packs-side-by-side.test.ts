import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT, runClean, type Exit } from "./support/processes.js";

// The e2e suites pack the runtime from several test files at once, while other processes import the compiled
// runtime. Its prepack step (scripts/vendor-trpc.mjs, the vendored @trpc/server) must let packs run side by side:
// each one succeeds, and each tarball holds the same complete files.

function pack(): Promise<Exit> {
  return runClean("npm", ["pack", "--dry-run", "--json"], path.join(REPO_ROOT, "packages/runtime"));
}

describe("packing the runtime", () => {
  it("four packs side by side all succeed, with the same complete files", async () => {
    const results = await Promise.all([pack(), pack(), pack(), pack()]);
    const lists = results.map((result) => {
      expect(result.code, result.stderr).toBe(0);
      const [{ files }] = JSON.parse(result.stdout.slice(result.stdout.indexOf("["))) as [{ files: { path: string }[] }];
      return files.map((file) => file.path).sort();
    });
    for (const list of lists) expect(list).toEqual(lists[0]);
    const vendored = lists[0]!.filter((file) => file.startsWith("dist/vendor/"));
    expect(vendored).toContain("dist/vendor/trpc-server/index.mjs");
    expect(vendored).toContain("dist/vendor/trpc-server/LICENSE");
    // Nothing of a copy being made or swapped out goes into a tarball.
    expect(vendored.every((file) => file.startsWith("dist/vendor/trpc-server/"))).toBe(true);
  }, 120_000);
});
