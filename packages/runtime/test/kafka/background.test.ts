import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { Event } from "../../src/core/event.js";
import { on } from "../../src/kafka/on.js";
import type { EventsBus } from "../../src/kafka/events-bus.js";
import { BROKER, createCleanup, eventually, requireBroker, uniqueName } from "./harness.js";

const cleanup = createCleanup();
beforeAll(requireBroker);
afterEach(() => cleanup.run());

// An inspection tool (`jfast jobs dead`) opens the same service as its workers. It must not join the
// service's consumer group: a rebalance would hand it partitions, and it would consume events it then stops
// handling when the command exits.
describe("createJfast({ background: false })", () => {
  it("starts no Kafka consumer and no scheduler, yet can publish", async () => {
    const topic = uniqueName("invoices");
    const group = uniqueName("shipping");
    const seen: string[] = [];
    const handler = on(topic, async (event) => {
      seen.push(String((event.data as { n: number }).n));
    });
    const root = await mkdtemp(path.join(tmpdir(), "jfast-background-"));
    cleanup.add(() => rm(root, { recursive: true, force: true }));
    await writeFile(
      path.join(root, "jfast.toml"),
      `[service]\nname = "shipping"\n\n[plugins]\nenabled = ["kafka", "queue"]\n\n[plugin.queue]\nbackend = "memory"\nscheduler = true\n\n` +
        `[plugin.kafka]\nbootstrap_servers = "${BROKER}"\nconsumer_group = "${group}"\n`,
    );
    const open = async (background: boolean): Promise<Jfast> => {
      const jfast = await createJfast({ root, env: {}, handlers: [handler], background });
      await jfast.start();
      cleanup.add(() => jfast.stop());
      return jfast;
    };

    const tool = await open(false);
    expect(() => tool.require("scheduler")).toThrow(/not available|scheduler/);
    // It can still publish (a repair script may need to).
    await tool.require<EventsBus>("events").publish(topic, new Event({ type: "invoice.paid", data: { n: 1 }, key: "k" }));
    await new Promise((r) => setTimeout(r, 1500));
    expect(seen).toEqual([]);

    // The service proper consumes what the tool published: the tool never took the group's offsets.
    const service = await open(true);
    expect(service.require("scheduler")).toBeTruthy();
    await eventually("the service to consume the event", () => seen.length === 1);
    expect(seen).toEqual(["1"]);
  });
});
