import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast } from "./jfast-process.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function serviceRoot(files: Record<string, string>): Promise<string> {
  const { root, remove } = await createServiceRoot(files);
  cleanups.push(remove);
  return root;
}

const MEMORY_QUEUE = `[service]\nname = "svc"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\n`;

describe("configuration mistakes on the command line", () => {
  it("a TOML syntax error on the tokens line is shown with the token masked, verbose or not", async () => {
    const token = "3f9c0a7e51d24b6c8e0f1a2b3c4d5e6f";
    const root = await serviceRoot({ "jfast.toml": `${MEMORY_QUEUE}[admin]\ntokens = ["ops:operator:${token}]\n` });
    for (const env of [{}, { JFAST_DEBUG: "1" }]) {
      const result = await runJfast(["worker", "--root", root], { env });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("is not valid TOML");
      expect(result.stderr).toContain(`ops:operator:${"*".repeat(token.length)}`);
      expect(result.stderr).toMatch(/\n\s+\^/);
      expect(result.stdout + result.stderr).not.toContain(token);
    }
  });

  it("--concurrency above the cap jfast.toml has is refused before anything starts", async () => {
    const root = await serviceRoot({ "jfast.toml": MEMORY_QUEUE });
    for (const command of ["worker", "dev"]) {
      const result = await runJfast([command, "--root", root, "--concurrency", "1000000"]);
      expect(result.code, command).toBe(2);
      expect(result.stderr).toContain("--concurrency must be at most 1000");
      expect(result.stderr).toContain("[plugin.queue] concurrency");
      expect(result.stderr).not.toContain("worker started");
    }
    const inFile = await serviceRoot({ "jfast.toml": `${MEMORY_QUEUE}concurrency = 1000000\n` });
    const fromFile = await runJfast(["worker", "--root", inFile]);
    expect(fromFile.code).toBe(1);
    expect(fromFile.stderr).toMatch(/\[plugin\.queue\] concurrency: .*1000/);
  });
});
