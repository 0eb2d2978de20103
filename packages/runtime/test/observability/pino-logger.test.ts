import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { createJfast } from "../../src/create-jfast.js";
import { Job } from "../../src/core/job.js";
import { defineTask } from "../../src/core/define-task.js";
import { isPinoLogger, toLogger, type Logger } from "../../src/observability/logger.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";

class CardDeclined extends Error {
  constructor() {
    super("the card was declined");
    this.name = "CardDeclined";
  }
}

/** A stream that keeps what pino writes to it, one parsed record per line. */
function recordingStream(): { stream: Writable; records: () => Record<string, any>[] } {
  let text = "";
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, records: () => text.split("\n").filter(Boolean).map((line) => JSON.parse(line) as Record<string, any>) };
}

async function waitFor(check: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("createJfast({ logger }) takes the service's pino logger as it is", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("jfast's lines keep their fields and the job's context, with the service's bindings and level", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "jfast-pino-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(
      path.join(dir, "jfast.toml"),
      `[service]\nname = "billing"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\nmax_attempts = 1\n`,
    );
    const { stream, records } = recordingStream();
    // The service's logger, configured its own way: its level, its base fields, a child with a binding.
    const servicePino = pino({ level: "info", base: { app: "billing-api" } }, stream).child({ component: "jobs" });
    const charge = defineTask("billing.charge", async (payload: { invoice: number }, { ctx }) => {
      ctx.logger!.info("charging the card", { invoice: payload.invoice });
      ctx.logger!.debug("below the service's level");
      throw new CardDeclined();
    });
    const jfast = await createJfast({ root: dir, env: {}, logger: servicePino, tasks: [charge] });
    await jfast.start();
    cleanups.push(() => jfast.stop());
    const worker = jfast.createWorker({ concurrency: 1 });

    const job = await jfast.withRequest({ tenantId: "acme", requestId: "req-42" }, async () => {
      const created = new Job({ task: "billing.charge", payload: { invoice: 7 } });
      await jfast.require<QueueProvider>("queue").enqueue(created);
      return created;
    });
    worker.start();
    await waitFor(() => records().some((r) => String(r.msg).includes("dead-lettered")));
    await worker.stop({ graceMs: 1000 });

    const charging = records().filter((r) => r.msg === "charging the card");
    expect(charging).toHaveLength(1);
    expect(charging[0]).toMatchObject({
      level: 30,
      app: "billing-api",
      component: "jobs",
      invoice: 7,
      tenant_id: "acme",
      request_id: "req-42",
      job_id: job.id,
      task: "billing.charge",
      attempt: 1,
    });
    expect(records().some((r) => r.msg === "below the service's level")).toBe(false);

    const dead = records().find((r) => String(r.msg).includes("dead-lettered"));
    expect(dead).toMatchObject({
      level: 50,
      app: "billing-api",
      request_id: "req-42",
      job_id: job.id,
      error: { class: "CardDeclined", message: "the card was declined" },
    });

    jfast.logger.warn("outside any job", { n: 1 });
    expect(records().at(-1)).toMatchObject({ level: 40, msg: "outside any job", n: 1, app: "billing-api", component: "jobs" });
    expect(records().at(-1)).not.toHaveProperty("job_id");
  });

  it("takes any other Logger as it is", () => {
    const calls: unknown[][] = [];
    const own: Logger = {
      debug: (...args) => calls.push(["debug", ...args]),
      info: (...args) => calls.push(["info", ...args]),
      warn: (...args) => calls.push(["warn", ...args]),
      error: (...args) => calls.push(["error", ...args]),
    };
    expect(isPinoLogger(own)).toBe(false);
    expect(toLogger(own)).toBe(own);
    expect(isPinoLogger(pino({ level: "silent" }))).toBe(true);
  });
});
