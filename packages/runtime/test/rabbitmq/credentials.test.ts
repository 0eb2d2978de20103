import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createRabbitMqBackend, type RabbitMqBackend } from "../../src/backends/rabbitmq/rabbitmq-backend.js";
import { createJfast } from "../../src/create-jfast.js";
import { uniqueQueue } from "./rabbitmq-test-env.js";

/** The running broker with the right user and a wrong password. */
const WRONG_PASSWORD_URL = "amqp://guest:not-the-password@127.0.0.1:5672";

describe("rabbitmq: credentials the broker refuses", () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("fail as ACCESS_REFUSED (BACKEND_AUTH) with a hint, at once, not as an unreachable broker", async () => {
    const warnings: Array<{ message: string; fields?: Record<string, unknown> }> = [];
    const backend: RabbitMqBackend = createRabbitMqBackend({
      url: WRONG_PASSWORD_URL,
      queue: uniqueQueue("credentials"),
      connectTimeoutMs: 10_000,
      logger: { warn: (message, fields) => void warnings.push({ message, ...(fields ? { fields } : {}) }), error() {} },
    });
    cleanups.push(() => backend.close());
    const started = Date.now();
    const error = await backend.setup().then(() => null, (e: unknown) => e as Error & { code?: string; hint?: string });
    expect(error).not.toBeNull();
    expect(error!.code).toBe("BACKEND_AUTH");
    expect(error!.message).toContain("ACCESS_REFUSED");
    expect(error!.message).toMatch(/wrong user name or password|credentials/);
    expect(error!.message).not.toMatch(/unreachable/);
    expect(error!.message).not.toContain("not-the-password");
    expect(error!.hint).toMatch(/AMQP_URL|\[plugin\.queue\] url/);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(warnings.map((w) => w.message).join("\n")).toMatch(/refused/);
    expect(JSON.stringify(warnings)).not.toContain("not-the-password");
  });

  it("stop jfast.start() with the same error", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "jfast-rabbitmq-credentials-"));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "app"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "rabbitmq"\nname = "${uniqueQueue("credentials")}"\n`);
    const jfast = await createJfast({ root, env: { AMQP_URL: WRONG_PASSWORD_URL }, logger: { debug() {}, info() {}, warn() {}, error() {} } });
    const error = await jfast.start().then(() => null, (e: unknown) => e as Error & { code?: string });
    cleanups.push(() => jfast.stop());
    expect(error?.code).toBe("BACKEND_AUTH");
    expect(error?.message).toContain("ACCESS_REFUSED");
  });
});
