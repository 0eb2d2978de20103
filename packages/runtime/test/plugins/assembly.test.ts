import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createJfast } from "../../src/create-jfast.js";
import { createLogger } from "../../src/observability/logger.js";
import { closedPort } from "../kafka/harness.js";
import { dropSchema, PG_URL, uniqueSchema } from "../postgres/pg-test-env.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A service on this machine's PostgreSQL, in a schema of its own, whose plugin start and stop lines are kept. */
async function service(params: { enabled: string[]; env?: Record<string, string> }) {
  const root = await mkdtemp(path.join(tmpdir(), "jfast-assembly-"));
  const schema = uniqueSchema("asm");
  cleanups.push(() => rm(root, { recursive: true, force: true }), () => dropSchema(schema));
  await writeFile(
    path.join(root, "jfast.toml"),
    `[service]\nname = "shop"\n[plugins]\nenabled = ${JSON.stringify(params.enabled)}\n[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\n[plugin.queue]\nbackend = "postgres"\nscheduler = true\n`,
  );
  const steps: string[] = [];
  const logger = createLogger({
    service: "shop",
    level: "debug",
    write(line) {
      const record = JSON.parse(line) as { msg: string; plugin?: string };
      if (record.msg === "plugin started" || record.msg === "plugin stopped") steps.push(`${record.msg.split(" ")[1]} ${record.plugin}`);
    },
  });
  const jfast = await createJfast({ root, env: params.env ?? {}, logger });
  cleanups.push(() => jfast.stop());
  return { jfast, steps };
}

describe("how a service is assembled", () => {
  it("starts the database, the queue, the outbox, the scheduler and the relay in that order, and stops them in reverse", async () => {
    const { jfast, steps } = await service({ enabled: ["database", "queue", "outbox"] });
    await jfast.start();
    expect(jfast.require("queue").name).toBe("jfast.jobs");
    await jfast.stop();
    expect(steps).toEqual([
      "started database",
      "started queue",
      "started outbox",
      "started scheduler",
      "started relay",
      "stopped relay",
      "stopped scheduler",
      "stopped outbox",
      "stopped queue",
      "stopped database",
    ]);
    expect(() => jfast.require("queue")).toThrow(expect.objectContaining({ code: "NOT_STARTED" }));
  });

  it("a plugin that fails to start (Kafka out of reach) stops those already started, in reverse, and leaves no provider behind", async () => {
    const port = await closedPort();
    const { jfast, steps } = await service({ enabled: ["database", "queue", "outbox", "kafka"], env: { KAFKA_BROKERS: `127.0.0.1:${port}` } });
    await expect(jfast.start()).rejects.toMatchObject({ code: "KAFKA_UNAVAILABLE" });
    expect(steps).toEqual(["started database", "started queue", "started outbox", "stopped outbox", "stopped queue", "stopped database"]);
    expect(() => jfast.require("database")).toThrow(expect.objectContaining({ code: "NOT_STARTED" }));
  });
});
