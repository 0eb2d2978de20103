import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { defineTask } from "../../src/core/define-task.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import { createLogger } from "../../src/observability/logger.js";
import type { Scheduler } from "../../src/scheduler/scheduler.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "./pg-env.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** Two apps with their own connections stand for two replicas of one service. */
interface Fleet {
  apps: Jfast[];
  /** Ticks each app's scheduler reported winning (from its logs). */
  wins: string[][];
  ran: string[];
  cleanup(): Promise<void>;
}

async function startFleet(toml: string, cleanupStore: () => Promise<void>): Promise<Fleet> {
  const root = await mkdtemp(path.join(tmpdir(), "jfast-scheduler-"));
  await writeFile(path.join(root, "jfast.toml"), toml);
  const ran: string[] = [];
  const refresh = defineTask("rates.refresh", { every: { seconds: 1 } }, async (payload: { scheduled_for: string }) => {
    ran.push(payload.scheduled_for);
  });
  const wins: string[][] = [];
  const apps: Jfast[] = [];
  for (let i = 0; i < 2; i++) {
    const won: string[] = [];
    wins.push(won);
    const logger = createLogger({
      service: "rates",
      level: "debug",
      write: (line) => {
        const record = JSON.parse(line) as { msg: string; tick?: string };
        if (record.msg === "scheduler: enqueued tick" || record.msg.startsWith("scheduler: fired")) won.push(record.tick!);
      },
    });
    apps.push(await createJfast({ root, tasks: [refresh], logger }));
  }
  await Promise.all(apps.map((app) => app.start()));
  return {
    apps,
    wins,
    ran,
    async cleanup() {
      await Promise.all(apps.map((app) => app.stop()));
      await cleanupStore();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Every second between the first and last tick, each enqueued by exactly one of the two apps. */
function expectEachTickOnce(fleet: Fleet): string[] {
  const all = fleet.wins.flat().sort();
  expect(new Set(all).size).toBe(all.length);
  expect(all.length).toBeGreaterThanOrEqual(3);
  for (let i = 1; i < all.length; i++) expect(Date.parse(all[i]!) - Date.parse(all[i - 1]!)).toBe(1000);
  return all;
}

describe("the scheduler in two apps sharing a store", () => {
  let fleet: Fleet | null = null;
  afterEach(async () => {
    await fleet?.cleanup();
    fleet = null;
  });

  it("PostgreSQL queue: each tick is claimed and enqueued once; /ready reports the scheduler", async () => {
    const schema = uniqueSchema("apps");
    fleet = await startFleet(
      `[service]\nname = "rates"\n\n[plugins]\nenabled = ["database", "queue"]\n\n[plugin.database]\nurl = "${DATABASE_URL}"\nschema = "${schema}"\n\n[plugin.queue]\nbackend = "postgres"\nscheduler = true\n`,
      () => dropSchema(schema),
    );
    const [a, b] = fleet.apps as [Jfast, Jfast];
    await new Promise((r) => setTimeout(r, 4500));
    await a.require<Scheduler>("scheduler").stop();
    await b.require<Scheduler>("scheduler").stop();
    const ticks = expectEachTickOnce(fleet);
    const db = a.require<DatabaseProvider>("database").sql;
    const jobs = await db.query<{ scheduled_for: string; n: number }>(
      "SELECT payload->>'scheduled_for' AS scheduled_for, count(*)::integer AS n FROM jfast_jobs WHERE task = 'rates.refresh' GROUP BY 1 ORDER BY 1",
    );
    expect(jobs).toEqual(ticks.map((t) => ({ scheduled_for: t, n: 1 })));
    const claims = await db.query<{ n: number }>("SELECT count(*)::integer AS n FROM jfast_schedules WHERE name = 'rates.refresh'");
    expect(claims[0]!.n).toBe(ticks.length);

    // Stopped, the scheduler makes readiness degraded, not unavailable; the queue check carries its report.
    const response = await a.fetch(new Request("http://service/ready"));
    expect(response.status).toBe(200);
    const body = (await response.json()) as { status: string; checks: Record<string, any> };
    expect(body.status).toBe("degraded");
    expect(body.checks.queue.status).toBe("degraded");
    expect(body.checks.queue.scheduler).toMatchObject({ status: "degraded", running: false, store: "postgres", reason: "the scheduler is stopped" });
    expect(body.checks.queue.scheduler.schedules[0]).toMatchObject({ name: "rates.refresh", task: "rates.refresh", everyMs: 1000 });
    expect(body.checks.scheduler).toEqual(body.checks.queue.scheduler);
  });

  it("a failing store makes /ready degraded (not unavailable) with the error, until it recovers", async () => {
    const schema = uniqueSchema("fail");
    fleet = await startFleet(
      `[service]\nname = "rates"\n\n[plugins]\nenabled = ["database", "queue"]\n\n[plugin.database]\nurl = "${DATABASE_URL}"\nschema = "${schema}"\n\n[plugin.queue]\nbackend = "postgres"\nscheduler = true\n`,
      () => dropSchema(schema),
    );
    const app = fleet.apps[0]!;
    const db = app.require<DatabaseProvider>("database").sql;
    const ready = async () => {
      const response = await app.fetch(new Request("http://service/ready"));
      return { code: response.status, body: (await response.json()) as { status: string; checks: Record<string, any> } };
    };
    await expect.poll(async () => (await ready()).body.checks.queue.scheduler.schedules[0].lastTick, { timeout: 5000 }).not.toBeNull();
    await db.query("ALTER TABLE jfast_schedules RENAME TO jfast_schedules_away");
    await expect.poll(async () => (await ready()).body.status, { timeout: 10_000 }).toBe("degraded");
    const failing = await ready();
    expect(failing.code).toBe(200);
    expect(failing.body.checks.queue.status).toBe("degraded");
    expect(failing.body.checks.queue.scheduler).toMatchObject({ status: "degraded", running: true });
    expect(failing.body.checks.queue.scheduler.lastError.message).toMatch(/jfast_schedules/);
    expect(failing.body.checks.queue.scheduler.reason).toMatch(/the scheduler is failing/);
    await db.query("ALTER TABLE jfast_schedules_away RENAME TO jfast_schedules");
    await expect.poll(async () => (await ready()).body.status, { timeout: 15_000 }).toBe("ok");
    expect((await ready()).body.checks.queue.scheduler.lastError.message).toMatch(/jfast_schedules/);
  });

  it("Redis queue: each tick is claimed and enqueued once", async () => {
    const queue = `jfast-test.sched-apps.${randomUUID().slice(0, 8)}`;
    const raw = new Redis(REDIS_URL);
    fleet = await startFleet(
      `[service]\nname = "rates"\n\n[plugins]\nenabled = ["queue"]\n\n[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${queue}"\nscheduler = true\n`,
      async () => {
        const keys = await raw.keys(`{${queue}}:*`);
        if (keys.length > 0) await raw.del(...keys);
        raw.disconnect();
      },
    );
    const [a, b] = fleet.apps as [Jfast, Jfast];
    const ready = await a.fetch(new Request("http://service/ready"));
    const report = (await ready.json()) as { status: string; checks: Record<string, any> };
    expect(report.checks.queue.scheduler).toMatchObject({ status: "ok", running: true, store: "redis", lastError: null });
    expect(Date.parse(report.checks.queue.scheduler.schedules[0].nextTick)).toBeGreaterThan(Date.now() - 1000);
    await new Promise((r) => setTimeout(r, 4500));
    await a.require<Scheduler>("scheduler").stop();
    await b.require<Scheduler>("scheduler").stop();
    const ticks = expectEachTickOnce(fleet);
    const depths = await a.require("queue").depths();
    expect(depths.ready + depths.scheduled).toBe(ticks.length);
    // A worker runs each tick's job once.
    const worker = a.createWorker({ concurrency: 2 });
    worker.start();
    await expect.poll(() => fleet!.ran.length, { timeout: 10_000 }).toBe(ticks.length);
    await worker.stop({ graceMs: 1000 });
    expect([...fleet.ran].sort()).toEqual(ticks);
  });

  it("jfast.require(\"scheduler\") names the setting when the scheduler is off", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "jfast-scheduler-"));
    try {
      await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "rates"\n\n[plugins]\nenabled = ["queue"]\n\n[plugin.queue]\nbackend = "memory"\n`);
      const app = await createJfast({ root, logger: createLogger({ service: "rates", level: "silent" }) });
      await app.start();
      expect(() => app.require("scheduler")).toThrow(/scheduler = true/);
      await app.stop();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("stops start-up on an invalid cron in task options, with the parser's message", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "jfast-scheduler-"));
    try {
      await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "rates"\n\n[plugins]\nenabled = ["queue"]\n\n[plugin.queue]\nbackend = "memory"\nscheduler = true\n`);
      const bad = defineTask("rates.refresh", { cron: "0 12 L * *" }, async () => {});
      await expect(createJfast({ root, tasks: [bad], logger: createLogger({ service: "rates", level: "silent" }) })).rejects.toMatchObject({
        code: "CRON_INVALID",
      });
      const app = await createJfast({ root, logger: createLogger({ service: "rates", level: "silent" }) });
      app.tasks.schedule("rates.missing", { every: { minutes: 1 } });
      await expect(app.start()).rejects.toMatchObject({ code: "SCHEDULE_TASK_UNKNOWN" });
      await app.stop();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
