import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { contractsSourceFor } from "../../src/admin/contracts-source.js";
import { TaskRegistry } from "../../src/core/registry.js";

/** The contracts view re-reads (and re-parses) a service's modules only when one of the files changed. */
describe("the contracts source's cache", () => {
  let root = "";
  afterEach(async () => {
    vi.useRealTimers();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("answers the same graph while the files are unchanged, and a new one once a module changes", async () => {
    root = await mkdtemp(path.join(tmpdir(), "jfast-contracts-cache-"));
    await cp(fileURLToPath(new URL("../fixtures/admin-contracts/", import.meta.url)), root, { recursive: true });
    vi.useFakeTimers({ toFake: ["Date"] });
    const source = contractsSourceFor({ root, registry: new TaskRegistry() });
    const first = await source.graph();
    vi.setSystemTime(Date.now() + 60_000);
    // A minute later, nothing changed on disk: the parsed graph is reused.
    expect(await source.graph()).toBe(first);
    await writeFile(path.join(root, "modules", "alert", "extra.ts"), `import { subscribe } from "@jfast/runtime";\nexport const onVoided = subscribe("receipt.voided_again", async () => {});\n`);
    // Within the stamp window the files are not looked at again.
    expect(await source.graph()).toBe(first);
    vi.setSystemTime(Date.now() + 3_000);
    const second = await source.graph();
    expect(second).not.toBe(first);
    expect(second.nodes.map((n) => n.id)).toContain("event:receipt.voided_again");
  });
});
