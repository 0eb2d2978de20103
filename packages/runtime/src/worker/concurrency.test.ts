import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createJfast, type Jfast } from "../create-jfast.js";
import { createLogger } from "../observability/logger.js";

describe("worker concurrency", () => {
  let jfast: Jfast | null = null;
  let root = "";
  afterEach(async () => {
    await jfast?.stop();
    jfast = null;
    await rm(root, { recursive: true, force: true });
  });

  it("is capped at 1000 in createWorker as in jfast.toml", async () => {
    root = await mkdtemp(path.join(tmpdir(), "jfast-concurrency-"));
    await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "svc"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\n`);
    jfast = await createJfast({ root, env: {}, logger: createLogger({ service: "svc", level: "silent" }) });
    await jfast.start();
    for (const concurrency of [1_000_000, 0, 2.5]) {
      expect(() => jfast!.createWorker({ concurrency }), String(concurrency)).toThrow(/concurrency must be a whole number from 1 to 1000/);
    }
    const worker = jfast.createWorker({ concurrency: 1000 });
    await worker.stop({ graceMs: 0 });
  });
});
