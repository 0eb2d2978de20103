import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { Job } from "../../src/core/job.js";
import { defineTask } from "../../src/core/define-task.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import { dropSchema, PG_URL, silentLogger, uniqueSchema } from "../postgres/pg-test-env.js";
import { parse, value } from "./prometheus.js";

async function waitFor(check: () => Promise<boolean>, ms = 15000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 25));
  }
}

const ok = defineTask("work.ok", async () => {
  await new Promise((r) => setTimeout(r, 5));
});
const broken = defineTask("work.broken", { maxAttempts: 2, backoffBaseMs: 10 }, async () => {
  throw new Error("always fails");
});

const BACKENDS = {
  memory: () => ({ toml: `[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\n`, schema: null }),
  postgres: () => {
    const schema = uniqueSchema("metrics");
    return {
      toml: `[plugins]\nenabled = ["database", "queue"]\n[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n[plugin.queue]\nbackend = "postgres"\n`,
      schema,
    };
  },
} as const;

describe("GET /metrics", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function app(toml: string): Promise<Jfast> {
    const dir = await mkdtemp(path.join(tmpdir(), "jfast-metrics-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(path.join(dir, "jfast.toml"), toml);
    const jfast = await createJfast({ root: dir, env: {}, logger: silentLogger, tasks: [ok, broken] });
    await jfast.start();
    cleanups.push(() => jfast.stop());
    return jfast;
  }

  for (const [kind, setup] of Object.entries(BACKENDS)) {
    it(`counts a known workload on ${kind}: 5 ok + 2 failing twice`, async () => {
      const { toml, schema } = setup();
      if (schema) cleanups.push(() => dropSchema(schema));
      const jfast = await app(`[service]\nname = "metered"\nenvironment = "development"\n${toml}`);
      const queue = jfast.require<QueueProvider>("queue");
      await queue.enqueue([
        ...Array.from({ length: 5 }, (_, i) => new Job({ task: "work.ok", payload: { i } })),
        ...Array.from({ length: 2 }, (_, i) => new Job({ task: "work.broken", payload: { i } })),
      ]);
      const before = parse(await (await jfast.fetch(new Request("http://x/metrics"))).text());
      expect(value(before, "jfast_queue_depth", { state: "ready", backend: kind, task: "work.ok" })).toBe(5);
      expect(value(before, "jfast_queue_depth", { state: "ready", backend: kind, task: "work.broken" })).toBe(2);

      const worker = jfast.createWorker({ concurrency: 4 });
      worker.start();
      await waitFor(async () => (await queue.depths()).dead === 2 && (await queue.depths()).ready + (await queue.depths()).running === 0);
      await worker.stop({ graceMs: 1000 });

      const response = await jfast.fetch(new Request("http://x/metrics"));
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toContain("text/plain");
      const samples = parse(await response.text());
      expect(value(samples, "jfast_jobs_processed_total", { task: "work.ok", service: "metered" })).toBe(5);
      expect(value(samples, "jfast_jobs_processed_total", { task: "work.broken" })).toBeUndefined();
      expect(value(samples, "jfast_jobs_failed_total", { task: "work.broken" })).toBe(4);
      expect(value(samples, "jfast_jobs_dead_total", { task: "work.broken" })).toBe(2);
      expect(value(samples, "jfast_job_duration_seconds_count", { task: "work.ok", outcome: "ok" })).toBe(5);
      expect(value(samples, "jfast_job_duration_seconds_count", { task: "work.broken", outcome: "retry" })).toBe(2);
      expect(value(samples, "jfast_job_duration_seconds_count", { task: "work.broken", outcome: "dead" })).toBe(2);
      // The ok handler sleeps 5 ms: the histogram's sum holds at least ~5 × 4 ms (timer granularity), all within 60 s.
      expect(value(samples, "jfast_job_duration_seconds_sum", { task: "work.ok", outcome: "ok" })).toBeGreaterThan(0.02);
      expect(value(samples, "jfast_job_duration_seconds_bucket", { task: "work.ok", outcome: "ok", le: "60" })).toBe(5);
      // One pickup per claim: 5 + 2 × 2 attempts.
      expect(value(samples, "jfast_job_pickup_latency_seconds_count", { task: "work.ok" })).toBe(5);
      expect(value(samples, "jfast_job_pickup_latency_seconds_count", { task: "work.broken" })).toBe(4);
      expect(value(samples, "jfast_queue_depth", { state: "dead", backend: kind, task: "work.broken" })).toBe(2);
      expect(value(samples, "jfast_queue_depth", { state: "ready", backend: kind, task: "work.ok" })).toBe(0);
    });
  }

  it("is closed in production unless [plugin.observability] expose_metrics = true", async () => {
    const closed = await app(`[service]\nname = "prod"\nenvironment = "production"\n${BACKENDS.memory().toml}`);
    expect((await closed.fetch(new Request("http://x/metrics"))).status).toBe(404);
    const open = await app(
      `[service]\nname = "prod"\nenvironment = "production"\n${BACKENDS.memory().toml.replace('"queue"]', '"queue", "observability"]')}[plugin.observability]\nexpose_metrics = true\n`,
    );
    const response = await open.fetch(new Request("http://x/metrics"));
    expect(response.status).toBe(200);
    expect(value(parse(await response.text()), "jfast_queue_depth", { state: "dead" })).toBe(0);
  });
});
