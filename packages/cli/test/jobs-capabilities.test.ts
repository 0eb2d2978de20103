import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast } from "./jfast-process.js";
import { AMQP_URL, dropRabbitQueue } from "./services.js";

// `jfast jobs run-now` and `jobs delete` on a RabbitMQ queue, as separate processes against the broker on
// 127.0.0.1:5672: the backend's capabilities say it cannot, so the command refuses before asking the broker.
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("jfast jobs on a backend without job actions", () => {
  for (const [command, verb] of [
    ["run-now", "run now"],
    ["delete", "delete"],
  ] as const) {
    it(`jobs ${command} says NOT_SUPPORTED, why, and what to do instead`, { timeout: 60_000 }, async () => {
      const queue = `jfast-test.cli-caps.${randomUUID().slice(0, 8)}`;
      cleanups.push(() => dropRabbitQueue(queue));
      const service = await createServiceRoot({
        "jfast.toml": [`[service]\nname = "svc"`, `[plugins]\nenabled = ["queue"]`, `[plugin.queue]\nbackend = "rabbitmq"\nurl = "${AMQP_URL}"\nname = "${queue}"`].join("\n"),
      });
      cleanups.push(service.remove);
      const result = await runJfast(["jobs", command, randomUUID(), "--root", service.root]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`the rabbitmq queue cannot ${verb} a waiting job`);
      expect(result.stderr).toContain("jfast jobs cancel <id>");
      expect(result.stderr).toContain("jfast docs backends#capabilities");
    });
  }
});
