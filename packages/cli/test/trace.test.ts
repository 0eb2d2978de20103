import { randomBytes, randomUUID } from "node:crypto";
import { createJfast, createLogger, Event, type DatabaseProvider, type Jfast, type Outbox } from "@jfast/runtime";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast } from "./jfast-process.js";
import { PG_URL, REDIS_URL, sql } from "./services.js";

// `jfast trace` as a separate process against a shop whose queue is on Redis and whose outbox is in its PostgreSQL
// schema: a request publishes an event, the relay hands one job per subscriber to the queue, a worker runs them.

const SUBSCRIBERS = `import { subscribe } from "@jfast/runtime";
export const checkBudget = subscribe("receipt.registered", async () => {});
export const trail = subscribe("receipt.registered", async () => { throw new Error("audit store unreachable"); });
`;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function shop(): Promise<{ root: string[]; jfast: Jfast }> {
  const schema = `jfast_cli_trace_${randomBytes(4).toString("hex")}`;
  const queue = `jfast-test.cli-trace.${randomUUID().slice(0, 8)}`;
  cleanups.push(() => sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
  cleanups.push(async () => {
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`{${queue}}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });
  const service = await createServiceRoot({
    "jfast.toml": [
      `[service]\nname = "shop"`,
      `[plugins]\nenabled = ["database", "queue", "outbox"]`,
      `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"`,
      `[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${queue}"\npoll_interval = 0.05\nmax_attempts = 1`,
      `[plugin.outbox]\npoll_interval = 0.1`,
    ].join("\n"),
    "modules/alert/tasks.ts": SUBSCRIBERS,
  });
  cleanups.push(service.remove);
  const jfast = await createJfast({ root: service.root, logger: createLogger({ service: "shop", level: "silent" }) });
  await jfast.start();
  cleanups.push(() => jfast.stop());
  return { root: ["--root", service.root], jfast };
}

describe("jfast trace", () => {
  it("prints a request's outbox rows, its event and the subscriber jobs that ran, from the request id or a job id", { timeout: 180_000 }, async () => {
    const { root, jfast } = await shop();
    const requestId = `req-${randomUUID()}`;
    const database = jfast.require<DatabaseProvider>("database");
    const outbox = jfast.require<Outbox>("outbox");
    const event = await jfast.withRequest({ requestId }, () =>
      database.transaction(async (tx) => {
        const made = new Event({ type: "receipt.registered", data: { receipt_id: "r-1" }, key: "r-1" });
        await outbox.publish(tx, "receipts", made);
        return made;
      }),
    );
    const worker = jfast.createWorker({ concurrency: 2 });
    worker.start();
    cleanups.push(() => worker.stop({ graceMs: 0 }));
    const queue = jfast.require<{ backend: { depths(): Promise<{ ready: number; running: number; scheduled: number; dead: number }> } }>("queue");
    const deadline = Date.now() + 30_000;
    while ((await queue.backend.depths()).dead < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));

    const json = await runJfast(["trace", requestId, "--json", ...root]);
    expect(json.code, json.stderr).toBe(0);
    const view = JSON.parse(json.stdout) as { service: string; matched: string; requestId: string; complete: boolean; notes: string[]; entries: Array<Record<string, unknown>> };
    expect(view).toMatchObject({ service: "shop", matched: "request", requestId, complete: false });
    expect(view.notes.join(" ")).toMatch(/keeps no index by request id/);
    const kinds = (kind: string) => view.entries.filter((e) => e.kind === kind);
    expect(kinds("event")).toEqual([expect.objectContaining({ id: event.id, name: "receipt.registered", outcome: "published" })]);
    expect(kinds("outbox")).toHaveLength(2);
    for (const row of kinds("outbox")) expect(row).toMatchObject({ outcome: "delivered", requestId, finishedAt: expect.any(String), durationMs: expect.any(Number) });
    const subscribers = kinds("subscriber");
    expect(subscribers.map((e) => e.outcome).sort()).toEqual(["completed", "dead"]);
    for (const job of subscribers) expect(job).toMatchObject({ parentId: event.id, requestId });
    expect(subscribers.find((e) => e.outcome === "dead")).toMatchObject({ error: "Error: audit store unreachable" });

    const dead = subscribers.find((e) => e.outcome === "dead")!;
    const text = await runJfast(["trace", String(dead.id), ...root]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`request   ${requestId}`);
    expect(text.stdout).toContain(`found     by job id ${dead.id}`);
    expect(text.stdout).toMatch(/subscriber\s+\S*trail\S*\s+dead/);
    expect(text.stdout).toContain("Error: audit store unreachable");

    const missing = await runJfast(["trace", "no-such-request", ...root]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("shop recorded nothing for no-such-request");
  });
});
