import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { Event } from "../../src/core/event.js";
import { createCleanup, eventually, requireBroker, startService, uniqueName } from "./harness.js";

const cleanup = createCleanup();
beforeAll(requireBroker);
afterEach(() => cleanup.run());

describe("on() declared in a module's tasks file", () => {
  it("is discovered at import, named after its export, and consumes before start() returns", async () => {
    const topic = uniqueName("invoices");
    const root = await mkdtemp(path.join(tmpdir(), "jfast-kafka-shipping-"));
    cleanup.add(() => rm(root, { recursive: true, force: true }));
    await mkdir(path.join(root, "modules/shipping"), { recursive: true });
    const onModule = path.resolve(import.meta.dirname, "../../src/kafka/on.ts");
    await writeFile(
      path.join(root, "modules/shipping/tasks.ts"),
      `import { on } from ${JSON.stringify(onModule)};\n` +
        `export const createShipment = on(${JSON.stringify(topic)}, async (event, { ctx }) => {\n` +
        `  ctx.require("shipments").push(event.data.invoice);\n` +
        `});\n`,
    );
    await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "shipping"\n\n[plugins]\nenabled = ["kafka"]\n`);
    const shipments: number[] = [];
    const shipping = cleanup.service(
      await startService({ name: "shipping", group: uniqueName("shipping"), root, providers: { shipments } }),
      false,
    );
    expect(shipping.events.handlers()).toEqual([{ topic, name: "shipping.createShipment" }]);

    const billing = cleanup.service(await startService({ name: "billing", group: uniqueName("billing") }));
    await billing.events.publish(topic, new Event({ type: "invoice.paid", data: { invoice: 12 }, key: "invoice-12" }));
    await eventually("the module's handler to run", () => shipments.length === 1);
    expect(shipments).toEqual([12]);
  });
});
