import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { Event } from "../../src/core/event.js";
import { Job } from "../../src/core/job.js";
import { on } from "../../src/kafka/on.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import { BROKER, createCleanup, eventually, requireBroker, startService, uniqueName } from "./harness.js";

const RUNTIME_ENTRY = fileURLToPath(new URL("../../src/index.ts", import.meta.url));

/**
 * Jobs a Kafka `on` handler enqueues carry the event's tenant (docs/flow-control.md#outbox-and-events), so they fall
 * under the queue's fairness by tenant like any other job of that tenant.
 */
describe("kafka: jobs made by an on() handler carry the event's tenant", () => {
  const cleanup = createCleanup();
  beforeAll(requireBroker);
  afterEach(() => cleanup.run());

  /** A service with the kafka plugin and a memory queue, whose one module declares the task the handler enqueues. */
  async function auditRoot(group: string): Promise<string> {
    const root = await mkdtemp(path.join(tmpdir(), "jfast-kafka-tenant-"));
    cleanup.add(() => rm(root, { recursive: true, force: true }));
    await writeFile(
      path.join(root, "jfast.toml"),
      `[service]\nname = "audit"\n\n[plugins]\nenabled = ["queue", "kafka"]\n\n[plugin.queue]\nbackend = "memory"\n\n[plugin.kafka]\nbootstrap_servers = "${BROKER}"\nconsumer_group = "${group}"\n`,
    );
    await mkdir(path.join(root, "modules", "audit"), { recursive: true });
    await writeFile(
      path.join(root, "modules", "audit", "tasks.ts"),
      `import { task } from ${JSON.stringify(RUNTIME_ENTRY)};\nexport const record = task("audit.record", async () => undefined);\n`,
    );
    return root;
  }

  it("a job enqueued inside the handler has the publisher's tenant; one for an event without a tenant has none", async () => {
    const topic = uniqueName("receipts");
    const group = uniqueName("audit");
    const made: string[] = [];
    let queue: QueueProvider | null = null;
    const audit = cleanup.service(
      await startService({
        name: "audit",
        group,
        root: await auditRoot(group),
        handlers: [
          on(topic, async (event) => {
            const job = new Job({ task: "audit.record", payload: { receipt: (event.data as { id: number }).id } });
            await queue!.enqueue(job);
            made.push(job.id);
          }),
        ],
      }),
    );
    queue = audit.jfast.require<QueueProvider>("queue");
    const billing = cleanup.service(await startService({ name: "billing", group: uniqueName("billing") }));
    await billing.jfast.withRequest({ tenantId: "acme", requestId: "req-7" }, () =>
      billing.events.publish(topic, new Event({ type: "receipt.registered", data: { id: 1 }, key: "r1" })),
    );
    await billing.events.publish(topic, new Event({ type: "receipt.registered", data: { id: 2 }, key: "r1" }));

    await eventually("both handled", async () => made.length === 2, 45_000);
    const jobs = await Promise.all(made.map((id) => queue!.backend.getJob({ id })));
    expect(jobs.map((info) => [info?.job.payload, info?.job.tenantId, info?.job.requestId])).toEqual([
      [{ receipt: 1 }, "acme", "req-7"],
      [{ receipt: 2 }, null, null],
    ]);
  });
});
