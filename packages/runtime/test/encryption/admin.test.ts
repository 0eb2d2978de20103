import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { defineTask } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { silentLogger } from "../postgres/pg-test-env.js";
import { call, eventually, OPERATOR, VIEWER } from "../admin/admin-harness.js";

/** The admin API shows an encrypted task's payload and errors as encrypted, except to those who may read them. */
describe("admin API: encrypted payloads and errors", () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function start(): Promise<Jfast> {
    const root = await mkdtemp(path.join(tmpdir(), "jfast-admin-encryption-"));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "billing"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\nmax_attempts = 1\n`);
    const charge = defineTask<{ pan: string; password: string }>("billing.charge", { encrypt: true }, async (payload) => {
      throw new Error(`declined ${payload.pan}`);
    });
    const jfast = await createJfast({
      root,
      tasks: [charge],
      env: { JFAST_ADMIN_TOKENS: `viewer:${VIEWER},alice:operator:${OPERATOR}`, JFAST_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString("base64")}` },
      logger: silentLogger,
    });
    await jfast.start();
    cleanups.push(() => jfast.stop());
    const worker = jfast.createWorker({ concurrency: 1 });
    worker.start();
    cleanups.push(() => worker.stop({ graceMs: 0 }));
    return jfast;
  }

  it("a viewer sees { encrypted: true }; an operator sees the plaintext, redacted", async () => {
    const jfast = await start();
    const pan = `pan-${randomUUID()}`;
    const { jobs } = await jfast.require("queue").enqueue(new Job({ task: "billing.charge", payload: { pan, password: "hunter2-secret" } }));
    const id = jobs[0]!.id;
    await eventually("the dead letter", async () => (await call(jfast, "deadLetters.list", { token: OPERATOR, input: {} })).data?.items.length === 1);

    const viewer = (await call(jfast, "deadLetters.list", { token: VIEWER, input: {} })).data.items[0];
    expect(viewer.payload).toEqual({ encrypted: true, kid: "k1" });
    expect(viewer.lastError.message).toBe("encrypted");
    expect(JSON.stringify(viewer)).not.toContain(pan);
    const viewed = (await call(jfast, "jobs.get", { token: VIEWER, input: { id } })).data.job;
    expect(viewed.payload).toEqual({ encrypted: true, kid: "k1" });
    expect(viewed.errors.map((e: { message: string; stack?: string }) => [e.message, e.stack])).toEqual([["encrypted", "encrypted"]]);

    const operator = (await call(jfast, "deadLetters.list", { token: OPERATOR, input: {} })).data.items[0];
    expect(operator.payload).toEqual({ pan, password: "[redacted]" });
    expect(operator.lastError.message).toBe(`declined ${pan}`);
    const got = (await call(jfast, "jobs.get", { token: OPERATOR, input: { id } })).data.job;
    expect(got.payload).toEqual({ pan, password: "[redacted]" });
    expect(got.errors[0].stack).toContain(`declined ${pan}`);
  });
});
