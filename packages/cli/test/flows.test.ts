import { randomBytes, randomUUID } from "node:crypto";
import { userInfo } from "node:os";
import { createJfast, createLogger, Job, type Jfast } from "@jfast/runtime";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast } from "./jfast-process.js";
import { AMQP_URL, dropRabbitQueue, PG_URL, REDIS_URL, sql } from "./services.js";

// `jfast flows list | show | cancel | retry` as separate processes against a service whose flows run on the Redis
// server and whose audit trail is its PostgreSQL schema's jfast_admin_audit table; each test on its own queue and
// schema. The flows are started and a step killed by the service itself (in this process, with a worker).

const TASKS = `import { PermanentError, task } from "@jfast/runtime";
export const step = task("shop.step", async (payload: { step: string }) => ({ from: payload.step, card_number: "4242424242424242" }));
export const flaky = task("shop.flaky", async () => { throw new PermanentError("carrier is down"); });
`;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface AuditRow {
  actor: string;
  action: string;
  ids: string[];
  filter: Record<string, unknown> | null;
  outcome: Record<string, unknown>;
}

async function redisService(): Promise<{ schema: string; root: string[]; jfast: Jfast }> {
  const schema = `jfast_cli_flows_${randomBytes(4).toString("hex")}`;
  const queue = `jfast-test.cli-flows.${randomUUID().slice(0, 8)}`;
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
      `[plugins]\nenabled = ["database", "queue"]`,
      `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"`,
      `[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${queue}"\npoll_interval = 0.05\nmax_attempts = 1`,
    ].join("\n"),
    "modules/shop/tasks.ts": TASKS,
  });
  cleanups.push(service.remove);
  // The service's own modules/shop/tasks.ts, loaded as the CLI loads it.
  const jfast = await createJfast({ root: service.root, background: false, logger: createLogger({ service: "shop", level: "silent" }) });
  await jfast.start();
  cleanups.push(() => jfast.stop());
  return { schema, root: ["--root", service.root], jfast };
}

const job = (name: string, task = "shop.step", delayMs?: number) => new Job({ task, payload: { step: name }, ...(delayMs ? { delayMs } : {}) });

async function auditRows(schema: string): Promise<AuditRow[]> {
  return sql<AuditRow>(`SELECT actor, action, ids, filter, outcome FROM "${schema}".jfast_admin_audit ORDER BY at DESC, id DESC`);
}

describe("jfast flows on a Redis queue", () => {
  it("lists and shows a failed flow, retries its dead step and cancels it, each repair one audit entry naming cli:<user>", { timeout: 180_000 }, async () => {
    const { schema, root, jfast } = await redisService();
    const queue = jfast.require("queue");
    const { flowId, jobIds } = await queue.flow({
      name: "order.fulfil",
      steps: { charge: job("charge"), ship: { job: job("ship", "shop.flaky"), after: ["charge"] }, notify: { job: job("notify"), after: ["ship"] } },
    });
    const worker = jfast.createWorker({ concurrency: 2 });
    worker.start();
    const deadline = Date.now() + 30_000;
    while ((await queue.backend.getFlow({ id: flowId }))?.state !== "failed" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await worker.stop({ graceMs: 0 });
    const other = await queue.flow({ name: "report.build", steps: { only: job("only", "shop.step", 3_600_000) } });

    const listed = await runJfast(["flows", "list", ...root]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^ID\s+NAME\s+STATE\s+STEPS\s+DEAD\s+CREATED\s+FINISHED\n/);
    expect(listed.stdout.split("\n")[1]).toMatch(new RegExp(`^${other.flowId}\\s+report\\.build\\s+running\\s+0/1\\s+0`));
    expect(listed.stdout.split("\n")[2]).toMatch(new RegExp(`^${flowId}\\s+order\\.fulfil\\s+failed\\s+1/3\\s+1`));
    const failed = await runJfast(["flows", "list", "--state", "failed", "--json", ...root]);
    expect(JSON.parse(failed.stdout)).toMatchObject({ items: [{ id: flowId, state: "failed", total: 3, completed: 1, dead: 1 }], nextCursor: null });
    const paged = await runJfast(["flows", "list", "--limit", "1", ...root]);
    expect(paged.stdout).toMatch(/next page: --after \S+/);
    const bad = await runJfast(["flows", "list", "--state", "stuck", ...root]);
    expect(bad.code).toBe(2);

    const shown = await runJfast(["flows", "show", flowId, "--json", ...root]);
    expect(shown.code, shown.stderr).toBe(0);
    const flow = JSON.parse(shown.stdout);
    expect(Object.keys(flow).slice(0, 4)).toEqual(["id", "name", "state", "steps"]);
    expect(flow).toMatchObject({ id: flowId, name: "order.fulfil", state: "failed" });
    expect(flow.steps.charge).toMatchObject({ state: "completed", jobId: jobIds.charge, after: [], result: { from: "charge", card_number: "[redacted]" }, error: null });
    expect(flow.steps.ship).toMatchObject({ state: "dead", jobId: jobIds.ship, after: ["charge"], result: null, error: { class: "PermanentError", message: "carrier is down" } });
    expect(flow.steps.notify).toMatchObject({ state: "waiting", after: ["ship"], result: null, error: null });
    const text = await runJfast(["flows", "show", flowId, ...root]);
    expect(text.stdout).toContain("failed (1 of 3 steps completed, 1 dead)");
    expect(text.stdout).toMatch(new RegExp(`ship\\s+dead\\s+charge\\s+${jobIds.ship}\\s+1\\s+[\\d.]+ (?:ms|s)\\s+PermanentError: carrier is down`));
    const unknown = await runJfast(["flows", "show", "no-such-flow", ...root]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("no flow with id no-such-flow");

    const actor = `cli:${userInfo().username}`;
    const notDead = await runJfast(["flows", "retry", flowId, "notify", ...root]);
    expect(notDead.code).toBe(1);
    expect(notDead.stderr).toContain(`step "notify" of flow ${flowId} is waiting, not dead`);
    expect(await auditRows(schema)).toEqual([]);

    const retried = await runJfast(["flows", "retry", flowId, "ship", ...root]);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toBe(`retried step ship of flow ${flowId} (job ${jobIds.ship})\n`);
    expect(await auditRows(schema)).toEqual([{ actor, action: "flows.retryStep", ids: [jobIds.ship], filter: { flow: flowId, step: "ship" }, outcome: { retried: 1, queue: "default" } }]);
    expect((await queue.backend.getFlow({ id: flowId }))?.steps.ship?.state).toBe("ready");

    const cancelled = await runJfast(["flows", "cancel", flowId, "--as", "ops-oncall", ...root]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toBe(`cancelled flow ${flowId}: 2 steps not yet finished\n`);
    const [entry, ...rest] = await auditRows(schema);
    expect(rest).toHaveLength(1);
    expect(entry).toMatchObject({ actor: "ops-oncall", action: "flows.cancel", filter: { flow: flowId }, outcome: { cancelled: 2, queue: "default" } });
    expect([...entry!.ids].sort()).toEqual([jobIds.ship, jobIds.notify].sort());
    const after = JSON.parse((await runJfast(["flows", "show", flowId, "--json", ...root])).stdout);
    expect(after.state).toBe("cancelled");

    const missing = await runJfast(["flows", "cancel", "no-such-flow", ...root]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no flow with id no-such-flow");
  });
});

describe("jfast flows on a RabbitMQ queue", () => {
  it("says NOT_SUPPORTED, why, and which backends keep flows", { timeout: 120_000 }, async () => {
    const queue = `jfast-test.cli-flows.${randomUUID().slice(0, 8)}`;
    cleanups.push(() => dropRabbitQueue(queue));
    const service = await createServiceRoot({
      "jfast.toml": `[service]\nname = "shop"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "rabbitmq"\nurl = "${AMQP_URL}"\nname = "${queue}"\n`,
      "modules/shop/tasks.ts": TASKS,
    });
    cleanups.push(service.remove);
    for (const args of [["flows", "list"], ["flows", "show", "x"], ["flows", "cancel", "x"]]) {
      const ran = await runJfast([...args, "--root", service.root]);
      expect(ran.code, args.join(" ")).toBe(1);
      expect(ran.stderr, args.join(" ")).toContain("a rabbitmq queue keeps no flows");
      expect(ran.stderr, args.join(" ")).toContain("jfast docs flows#backends");
    }
  });
});
