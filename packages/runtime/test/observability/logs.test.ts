import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { Job } from "../../src/core/job.js";
import { defineTask } from "../../src/core/define-task.js";
import { createLogger } from "../../src/observability/logger.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";

class CardDeclined extends Error {
  constructor() {
    super("the card was declined");
    this.name = "CardDeclined";
  }
}

async function waitFor(check: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("logs name the job and the request that caused it", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("a failed attempt is logged once, with its error and the originating request id; handler logs carry the same fields", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "jfast-logs-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(
      path.join(dir, "jfast.toml"),
      `[service]\nname = "billing"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\nmax_attempts = 2\nbackoff_base = 0.01\n`,
    );
    const lines: string[] = [];
    const logger = createLogger({ service: "billing", level: "info", write: (line) => lines.push(line) });
    const charge = defineTask("billing.charge", async (_payload, { ctx }) => {
      ctx.logger!.info("charging the card");
      throw new CardDeclined();
    });
    const jfast: Jfast = await createJfast({ root: dir, env: {}, logger, tasks: [charge] });
    await jfast.start();
    cleanups.push(() => jfast.stop());
    const worker = jfast.createWorker({ concurrency: 1 });

    const job = await jfast.withRequest({ tenantId: "acme", requestId: "req-42" }, async () => {
      const created = new Job({ task: "billing.charge", payload: { invoice: 7 } });
      await jfast.require<QueueProvider>("queue").enqueue(created);
      return created;
    });
    worker.start();
    await waitFor(() => lines.some((l) => l.includes("dead-lettered")));
    await worker.stop({ graceMs: 1000 });

    const records = lines.map((l) => JSON.parse(l) as Record<string, any>);
    const failures = records.filter((r) => r.error?.class === "CardDeclined");
    // Two attempts, two failures, each logged exactly once.
    expect(failures.map((r) => r.attempt)).toEqual([1, 2]);
    for (const failure of failures) {
      expect(failure).toMatchObject({
        service: "billing",
        tenant_id: "acme",
        request_id: "req-42",
        job_id: job.id,
        task: "billing.charge",
        error: { class: "CardDeclined", message: "the card was declined" },
      });
      expect(failure.error.stack).toContain("CardDeclined");
      expect(typeof failure.time).toBe("string");
    }
    expect(failures[0]!.level).toBe("warn");
    expect(failures[1]!.level).toBe("error");
    const inHandler = records.filter((r) => r.msg === "charging the card");
    expect(inHandler.map((r) => [r.request_id, r.job_id, r.attempt, r.tenant_id])).toEqual([
      ["req-42", job.id, 1, "acme"],
      ["req-42", job.id, 2, "acme"],
    ]);
  });

  it("respects the level and writes nothing when silent", () => {
    const lines: string[] = [];
    const logger = createLogger({ service: "s", level: "warn", write: (line) => lines.push(line) });
    logger.info("hidden");
    logger.warn("shown", { n: 1 });
    createLogger({ service: "s", level: "silent", write: (line) => lines.push(line) }).error("never");
    expect(lines.map((l) => JSON.parse(l))).toEqual([expect.objectContaining({ msg: "shown", n: 1, level: "warn", service: "s" })]);
  });
});
