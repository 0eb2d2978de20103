import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { TraceView } from "../../src/admin/trace.js";
import { mergeTraces, traceRequestId } from "../../src/admin/trace-merge.js";
import { Event } from "../../src/core/event.js";
import { Job } from "../../src/core/job.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import type { Jfast } from "../../src/create-jfast.js";
import { on } from "../../src/kafka/on.js";
import type { Outbox } from "../../src/outbox/outbox.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import { PG_URL, dropSchema, uniqueSchema } from "../postgres/pg-test-env.js";
import { BROKER, createCleanup, eventually, requireBroker, startService, uniqueName } from "./harness.js";

const RUNTIME_ENTRY = fileURLToPath(new URL("../../src/index.ts", import.meta.url));
const TOKEN = "viewer-token-trace-0123456789abcdef";

/**
 * One request across two services (docs/admin-api.md#timeline): billing, on PostgreSQL with its outbox, runs a job
 * and publishes an event to Kafka in the request; shipping, on the memory queue, hears it in an `on` handler and
 * enqueues a job, which carries the request id. Each service's trace.get holds its share; joined, they are the
 * request's timeline across both.
 */
describe("kafka: one request's timeline across two services", () => {
  const cleanup = createCleanup();
  beforeAll(requireBroker);
  afterEach(() => cleanup.run());

  async function serviceRoot(params: { name: string; toml: string; task: string }): Promise<string> {
    const root = await mkdtemp(path.join(tmpdir(), `jfast-trace-${params.name}-`));
    cleanup.add(() => rm(root, { recursive: true, force: true }));
    await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "${params.name}"\n\n${params.toml}`);
    await mkdir(path.join(root, "modules", params.name), { recursive: true });
    await writeFile(
      path.join(root, "modules", params.name, "tasks.ts"),
      `import { task } from ${JSON.stringify(RUNTIME_ENTRY)};\nexport const work = task(${JSON.stringify(params.task)}, async () => undefined);\n`,
    );
    return root;
  }

  async function trace(jfast: Jfast, id: string): Promise<TraceView> {
    const response = await jfast.fetch(
      new Request(`http://service/jfast/admin/trace.get?input=${encodeURIComponent(JSON.stringify({ id }))}`, { headers: { authorization: `Bearer ${TOKEN}` } }),
    );
    const body = (await response.json()) as { result?: { data: TraceView }; error?: unknown };
    expect(body.error ?? null).toBeNull();
    return body.result!.data;
  }

  it("billing's job and Kafka hop and the job shipping ran for the same request, joined oldest first", { timeout: 120_000 }, async () => {
    const topic = uniqueName("parcels");
    const schema = uniqueSchema("trace2");
    cleanup.add(() => dropSchema(schema));
    const env = { JFAST_ADMIN_TOKENS: `viewer:${TOKEN}` };

    let shippingQueue: QueueProvider | null = null;
    const shippingGroup = uniqueName("shipping");
    const shipping = cleanup.service(
      await startService({
        name: "shipping",
        group: shippingGroup,
        env,
        root: await serviceRoot({
          name: "shipping",
          task: "shipping.label",
          toml: `[plugins]\nenabled = ["queue", "kafka"]\n\n[plugin.queue]\nbackend = "memory"\npoll_interval = 0.05\n\n[plugin.kafka]\nbootstrap_servers = "${BROKER}"\nconsumer_group = "${shippingGroup}"\n`,
        }),
        handlers: [on(topic, async (event) => void (await shippingQueue!.enqueue(new Job({ task: "shipping.label", payload: { parcel: (event.data as { id: string }).id } }))))],
      }),
    );
    shippingQueue = shipping.jfast.require<QueueProvider>("queue");
    const shippingWorker = shipping.jfast.createWorker({ concurrency: 2 });
    shippingWorker.start();
    cleanup.add(() => shippingWorker.stop({ graceMs: 0 }));

    const billingGroup = uniqueName("billing");
    const billing = cleanup.service(
      await startService({
        name: "billing",
        group: billingGroup,
        env,
        root: await serviceRoot({
          name: "billing",
          task: "billing.charge",
          toml: [
            `[plugins]\nenabled = ["database", "queue", "outbox", "kafka"]`,
            `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4`,
            `[plugin.queue]\nbackend = "postgres"\npoll_interval = 0.05`,
            `[plugin.outbox]\npoll_interval = 0.1`,
            `[plugin.kafka]\nbootstrap_servers = "${BROKER}"\nconsumer_group = "${billingGroup}"\n`,
          ].join("\n\n"),
        }),
      }),
    );
    const billingWorker = billing.jfast.createWorker({ concurrency: 2 });
    billingWorker.start();
    cleanup.add(() => billingWorker.stop({ graceMs: 0 }));

    const requestId = uniqueName("req");
    const charge = await billing.jfast.withRequest({ requestId }, async () => {
      const job = new Job({ task: "billing.charge", payload: { invoice: "in-1" } });
      const database = billing.jfast.require<DatabaseProvider>("database");
      await database.transaction(async (tx) => {
        await billing.jfast.require<Outbox>("outbox").enqueue(tx, job);
        await billing.jfast.require<Outbox>("outbox").publish(tx, topic, new Event({ type: "parcel.sent", data: { id: "p-1" }, key: "p-1" }));
      });
      return job;
    });

    const shipped = await eventually(
      "shipping's job for the request completed",
      async () => {
        const view = await trace(shipping.jfast, requestId);
        return view.entries.some((e) => e.kind === "job" && e.name === "shipping.label" && e.outcome === "completed") ? view : null;
      },
      60_000,
    );
    const billed = await eventually("billing's share complete", async () => {
      const view = await trace(billing.jfast, charge.id);
      const hop = view.entries.find((e) => e.kind === "kafka");
      return hop?.outcome === "delivered" && view.entries.some((e) => e.kind === "job" && e.outcome === "completed") ? view : null;
    });

    // From billing's job id, billing names the request; shipping is asked by that request id (as the dashboard does).
    expect(billed).toMatchObject({ matched: "job", requestId, complete: true });
    expect(traceRequestId([billed, await trace(shipping.jfast, charge.id)])).toBe(requestId);
    const merged = mergeTraces([billed, shipped]);
    expect(merged.requestId).toBe(requestId);
    expect(new Set(merged.entries.map((e) => e.service))).toEqual(new Set(["billing", "shipping"]));
    const byKind = (service: string, kind: string) => merged.entries.filter((e) => e.service === service && e.kind === kind);
    expect(byKind("billing", "job").map((e) => e.name)).toEqual(["billing.charge"]);
    expect(byKind("billing", "kafka")).toEqual([expect.objectContaining({ name: `parcel.sent → ${topic}`, outcome: "delivered", requestId })]);
    expect(byKind("billing", "event")).toEqual([expect.objectContaining({ name: "parcel.sent", outcome: "published" })]);
    expect(byKind("shipping", "job")).toEqual([expect.objectContaining({ name: "shipping.label", outcome: "completed", requestId })]);
    // The hop to Kafka comes before the job shipping ran because of it.
    const hop = byKind("billing", "kafka")[0]!;
    const label = byKind("shipping", "job")[0]!;
    expect(merged.entries.indexOf(hop)).toBeLessThan(merged.entries.indexOf(label));
  });
});
