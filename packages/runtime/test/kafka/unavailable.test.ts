import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { Event } from "../../src/core/event.js";
import { JfastError } from "../../src/errors/jfast-error.js";
import { on } from "../../src/kafka/on.js";
import { closedPort, createCleanup, REPO_ROOT, requireBroker, startService, uniqueName } from "./harness.js";

const run = promisify(execFile);
const cleanup = createCleanup();
beforeAll(requireBroker);
afterEach(() => cleanup.run());

async function startFailure(params: Parameters<typeof startService>[0]): Promise<JfastError> {
  const error = await startService(params).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(JfastError);
  return error as JfastError;
}

describe("a broker that cannot be reached", () => {
  it("stops start-up with KAFKA_UNAVAILABLE naming KAFKA_BROKERS and the docs", async () => {
    const port = await closedPort();
    const error = await startFailure({
      name: "shipping",
      group: uniqueName("shipping"),
      env: { KAFKA_BROKERS: `127.0.0.1:${port}` },
      handlers: [on(uniqueName("orders"), () => {})],
    });
    expect(error.code).toBe("KAFKA_UNAVAILABLE");
    expect(error.message).toContain(`127.0.0.1:${port}`);
    expect(error.message).toContain("KAFKA_BROKERS");
    expect(error.hint).toContain("docker/kafka/start.sh");
    expect(error.docs).toBe("jfast docs kafka#connecting");
  });

  it("names [plugin.kafka] bootstrap_servers when the address came from jfast.toml", async () => {
    const port = await closedPort();
    const error = await startFailure({ name: "billing", group: uniqueName("billing"), brokers: `127.0.0.1:${port}` });
    expect(error.code).toBe("KAFKA_UNAVAILABLE");
    expect(error.message).toContain("[plugin.kafka] bootstrap_servers");
  });

  it("fails publish with KAFKA_UNAVAILABLE and marks /ready unavailable when the broker goes away", async () => {
    // A broker of this test's own: stopping the shared one would break the suites running beside this one.
    const state = await mkdtemp(path.join(tmpdir(), "jfast-kafka-outage-"));
    const [port, controllerPort] = [await closedPort(), await closedPort()];
    const env = { ...process.env, JFAST_KAFKA_STATE: state, JFAST_KAFKA_PORT: String(port), JFAST_KAFKA_CONTROLLER_PORT: String(controllerPort) };
    const script = (name: string) => path.join(REPO_ROOT, "docker/kafka", name);
    cleanup.add(() => rm(state, { recursive: true, force: true }));
    cleanup.add(() => run("bash", [script("stop.sh")], { env }));
    await run("bash", [script("start.sh")], { env, timeout: 90_000 });

    const billing = cleanup.service(await startService({ name: "billing", group: uniqueName("billing"), brokers: `127.0.0.1:${port}` }));
    const topic = uniqueName("invoices");
    await billing.events.publish(topic, new Event({ type: "invoice.paid", key: "invoice-1" }));
    expect((await (await billing.jfast.fetch(new Request("http://s/ready"))).json()).checks.events.status).toBe("ok");

    await run("bash", [script("stop.sh")], { env });
    const error = await billing.events.publish(topic, new Event({ type: "invoice.paid", key: "invoice-2" })).then(
      () => null,
      (e: unknown) => e as JfastError,
    );
    expect(error).toBeInstanceOf(JfastError);
    expect(error!.code).toBe("KAFKA_UNAVAILABLE");
    expect(error!.docs).toBe("jfast docs kafka#connecting");

    const response = await billing.jfast.fetch(new Request("http://s/ready"));
    const ready = (await response.json()) as { status: string; checks: { events: { status: string; error: string } } };
    expect(response.status).toBe(503);
    expect(ready.checks.events.status).toBe("unavailable");
    expect(ready.checks.events.error).toContain(`127.0.0.1:${port}`);
  }, 150_000); // a broker start on a machine busy with the other suites can take most of a minute
});

describe("publishing and declaring", () => {
  it("refuses an event without a key: the key is the aggregate id that keeps its events in order", async () => {
    const billing = cleanup.service(await startService({ name: "billing", group: uniqueName("billing") }));
    const error = await billing.events.publish(uniqueName("orders"), new Event({ type: "order.paid", data: {} })).then(
      () => null,
      (e: unknown) => e as JfastError,
    );
    expect(error?.code).toBe("EVENT_KEY_MISSING");
    expect(error?.docs).toBe("jfast docs kafka#keys");
  });

  it("refuses on() handlers when the events plugin is off, before connecting to anything", async () => {
    const { createJfast } = await import("../../src/create-jfast.js");
    const { mkdtemp: mk, writeFile } = await import("node:fs/promises");
    const root = await mk(path.join(tmpdir(), "jfast-kafka-off-"));
    cleanup.add(() => rm(root, { recursive: true, force: true }));
    await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "shipping"\n`);
    const error = await createJfast({ root, env: {}, handlers: [on("orders", () => {})] }).then(
      () => null,
      (e: unknown) => e as JfastError,
    );
    expect(error?.code).toBe("CONFIG_PLUGIN_MISSING");
    expect(error?.docs).toBe("jfast docs kafka");
  });
});
