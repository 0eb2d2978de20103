import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createJfast } from "../../src/create-jfast.js";
import { Event } from "../../src/core/event.js";
import { ConfigError } from "../../src/errors/jfast-error.js";
import { on } from "../../src/kafka/on.js";
import { BROKER, createCleanup, eventually, requireBroker, startService, uniqueName } from "./harness.js";

const cleanup = createCleanup();
beforeAll(requireBroker);
afterEach(() => cleanup.run());

async function rootWith(toml: string): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), "jfast-kafka-renamed-"));
  cleanup.add(() => rm(root, { recursive: true, force: true }));
  await writeFile(path.join(root, "jfast.toml"), toml);
  return root;
}

describe("the Kafka plugin's id", () => {
  it('the old name "events" in a jfast.toml stops start-up with an error naming "kafka"', async () => {
    const root = await rootWith(`[service]\nname = "shipping"\n\n[plugins]\nenabled = ["events"]\n\n[plugin.events]\nbootstrap_servers = "${BROKER}"\n`);
    const error = await createJfast({ root, env: {} }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({
      code: "CONFIG_PLUGIN_RENAMED",
      message: expect.stringContaining(`${path.join(root, "jfast.toml")}: the "events" plugin is now called "kafka" (found "events" in [plugins] enabled and [plugin.events])\n`),
      hint: 'rename "events" to "kafka" in [plugins] enabled and [plugin.events] to [plugin.kafka]',
      docs: "jfast docs kafka#renamed-from-events",
    });
  });

  it('"kafka" with [plugin.kafka] starts, consumes, and still provides require("events")', async () => {
    const topic = uniqueName("invoices");
    const heard: unknown[] = [];
    const shipping = cleanup.service(await startService({ name: "shipping", group: uniqueName("shipping"), handlers: [on(topic, (event) => void heard.push(event.data))] }));
    expect(shipping.jfast.require("events")).toBe(shipping.events);
    await shipping.events.publish(topic, new Event({ type: "invoice.paid", data: { invoice: 7 }, key: "invoice-7" }));
    await eventually("the handler to hear the event", () => heard.length === 1);
    expect(heard).toEqual([{ invoice: 7 }]);
  });
});
