import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { Event } from "../../src/core/event.js";
import { createJfast } from "../../src/create-jfast.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import { subscriberJobId } from "../../src/local-events/subscriber-jobs.js";
import type { Outbox } from "../../src/outbox/outbox.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import { dropSchema, eventually, PG_URL, silentLogger, uniqueSchema } from "../postgres/pg-test-env.js";

const RUNTIME = fileURLToPath(new URL("../../src/index.ts", import.meta.url));

/** A throwaway service root whose module files import this checkout's runtime source. */
async function serviceRoot(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), "jfast-events-"));
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), text.replaceAll('"@jfast/runtime"', JSON.stringify(RUNTIME)));
  }
  return root;
}

describe("subscribers at start-up", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const remember = (root: string) => cleanups.push(() => rm(root, { recursive: true, force: true }));

  it("a subscriber without the queue plugin stops start-up, naming it and the fix", async () => {
    const root = await serviceRoot({
      "jfast.toml": `[service]\nname = "shop"\n[plugins]\nenabled = ["observability"]\n`,
      "modules/alert/tasks.ts": `import { subscribe } from "@jfast/runtime";\nexport const checkBudget = subscribe("receipt.registered", async () => {});\n`,
    });
    remember(root);
    await expect(createJfast({ root, env: {}, logger: silentLogger })).rejects.toMatchObject({
      code: "CONFIG_PLUGIN_MISSING",
      message: expect.stringMatching(/subscriber "receipt\.registered->alert\.checkBudget" needs the queue plugin[\s\S]*fix: add "queue"/),
    });
  });

  it("a subscriber that is not exported stops start-up: it would have no task name", async () => {
    const root = await serviceRoot({
      "jfast.toml": `[service]\nname = "shop"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\n`,
      "modules/alert/tasks.ts": `import { subscribe } from "@jfast/runtime";\nconst hidden = subscribe("receipt.cancelled", async () => {});\nvoid hidden;\n`,
    });
    remember(root);
    await expect(createJfast({ root, env: {}, logger: silentLogger })).rejects.toMatchObject({
      code: "SUBSCRIBER_UNNAMED",
      message: expect.stringContaining('modules/alert: a subscriber to "receipt.cancelled" is not exported'),
    });
  });

  it("publishing on a queue that is not PostgreSQL goes through the outbox relay: the job reaches the queue after commit", async () => {
    const schema = uniqueSchema("evmem");
    cleanups.push(() => dropSchema(schema));
    const root = await serviceRoot({
      "jfast.toml": [
        `[service]\nname = "shop"`,
        `[plugins]\nenabled = ["database", "queue", "outbox"]`,
        `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"`,
        `[plugin.queue]\nbackend = "memory"`,
      ].join("\n"),
      "modules/alert/tasks.ts": `import { subscribe } from "@jfast/runtime";\nexport const checkBudget = subscribe("receipt.registered", async () => {});\n`,
    });
    remember(root);
    const jfast = await createJfast({ root, env: {}, logger: silentLogger });
    cleanups.push(() => jfast.stop());
    await jfast.start();
    const outbox = jfast.require<Outbox>("outbox");
    const event = new Event({ type: "receipt.registered" });
    const jobId = subscriberJobId(event.id, "receipt.registered->alert.checkBudget");
    const result = await jfast.require<DatabaseProvider>("database").transaction((tx) => outbox.publish(tx, "receipts", event));
    expect(result.inserted).toEqual([jobId]);
    const queue = jfast.require<QueueProvider>("queue");
    await eventually("the relay to move the job to the memory queue", async () => (await queue.backend.getJob({ id: jobId })) !== null);
  });
});
