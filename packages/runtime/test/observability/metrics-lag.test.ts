// The lag gauges of GET /metrics after a known workload on the real services: outbox rows a Redis of the
// test's own keeps refusing, and a scheduler whose store (that same Redis) goes away.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createJfast } from "../../src/create-jfast.js";
import { defineTask } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import { copyFixture, startPrivateRedis, startShop } from "../outbox/outbox-env.js";
import { dropSchema, eventually, silentLogger, uniqueSchema } from "../postgres/pg-test-env.js";
import { uniqueQueue } from "../redis/redis-test-env.js";
import { scrape, value, type Sample } from "./prometheus.js";

describe("GET /metrics: outbox and scheduler lag", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("jfast_outbox_pending and jfast_outbox_lag_seconds: 2 rows Redis refuses are pending and failing with a lag, then dead, then delivered", async () => {
    const redis = await startPrivateRedis();
    cleanups.push(() => redis.stop());
    const schema = uniqueSchema("oblag");
    cleanups.push(() => dropSchema(schema));
    const fixture = await copyFixture("outbox-relay");
    cleanups.push(fixture.remove);
    // Two attempts a second apart: long enough to scrape the failing state, short enough to reach dead.
    const app = await startShop({
      root: fixture.root,
      schema,
      queue: { backend: "redis", url: redis.url, name: uniqueQueue("oblag") },
      outbox: { max_attempts: 2, backoff_base: 1 },
    });
    cleanups.push(() => app.jfast.stop());
    const outbox = (samples: Sample[]) => ({
      pending: value(samples, "jfast_outbox_pending", { state: "pending" }),
      failing: value(samples, "jfast_outbox_pending", { state: "failing" }),
      dead: value(samples, "jfast_outbox_pending", { state: "dead" }),
      lag: value(samples, "jfast_outbox_lag_seconds"),
    });
    expect(outbox(await scrape(app.jfast))).toEqual({ pending: 0, failing: 0, dead: 0, lag: 0 });

    // A real refusal from the real server: writes need a replica this Redis does not have.
    await redis.command("CONFIG", "SET", "min-replicas-to-write", "1");
    const jobs = ["r1", "r2"].map((id) => new Job({ task: "mail.send_receipt", payload: { receipt_id: id } }));
    await app.database.transaction((tx) => app.outbox.enqueue(tx, jobs));

    const failing = await eventually("both rows failing, in one scrape", async () => {
      const state = outbox(await scrape(app.jfast));
      return state.failing === 2 ? state : null;
    });
    expect(failing).toMatchObject({ pending: 2, dead: 0 });
    expect(failing.lag).toBeGreaterThan(0);

    const dead = await eventually("both rows dead, in one scrape", async () => {
      const state = outbox(await scrape(app.jfast));
      return state.dead === 2 ? state : null;
    });
    // Dead rows are no longer waiting for the relay: no backlog, no lag.
    expect(dead).toEqual({ pending: 0, failing: 0, dead: 2, lag: 0 });

    await redis.command("CONFIG", "SET", "min-replicas-to-write", "0");
    const rows = await app.outbox.listDead({ limit: 10 });
    await app.outbox.retryDead({ ids: rows.map((r) => r.id) });
    await eventually("the rows delivered", async () => (await app.backend.getJob({ id: jobs[1]!.id })) !== null);
    await eventually("the gauges back to zero", async () => {
      const state = outbox(await scrape(app.jfast));
      return state.pending === 0 && state.dead === 0 && state.lag === 0;
    });
  });

  it("jfast_scheduler_tick_lag_seconds: grows while the scheduler's store is unreachable (and /metrics still answers), back under a second once it returns", async () => {
    const redis = await startPrivateRedis();
    cleanups.push(() => redis.stop());
    const root = await mkdtemp(path.join(tmpdir(), "jfast-tick-lag-"));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await writeFile(
      path.join(root, "jfast.toml"),
      `[service]\nname = "rates"\nenvironment = "development"\n\n[plugins]\nenabled = ["queue"]\n\n` +
        `[plugin.queue]\nbackend = "redis"\nurl = "${redis.url}"\nname = "${uniqueQueue("ticklag")}"\nscheduler = true\n`,
    );
    const refresh = defineTask("rates.refresh", { every: { seconds: 1 } }, async () => undefined);
    const jfast = await createJfast({ root, env: {}, logger: silentLogger, tasks: [refresh] });
    cleanups.push(() => jfast.stop());
    await jfast.start();
    const lag = async () => value(await scrape(jfast), "jfast_scheduler_tick_lag_seconds", { schedule: "rates.refresh", service: "rates" });

    // Running normally: the next tick is at most moments past due (the pass that claims it is under way).
    await eventually("a first tick claimed", async () => (await jfast.require<{ status(): { schedules: { lastTick: string | null }[] } }>("scheduler").status()).schedules[0]?.lastTick);
    expect(await lag()).toBeLessThan(1);

    expect(value(await scrape(jfast), "jfast_metrics_collect_failed")).toBeUndefined();

    await redis.stop();
    try {
      // Every pass fails to read the store: the tick it should have claimed stays due, and the gauge says by
      // how much. /metrics still answers: only the queue depth, which needs Redis, is left out, and named.
      await eventually("the lag past two seconds", async () => ((await lag()) ?? 0) > 2, 30_000);
      const during = await scrape(jfast);
      expect(value(during, "jfast_metrics_collect_failed", { metric: "jfast_queue_depth" })).toBe(1);
      expect(value(during, "jfast_queue_depth")).toBeUndefined();
    } finally {
      await redis.start();
    }
    await eventually("the lag back under a second", async () => ((await lag()) ?? Infinity) < 1, 30_000);
    expect(value(await scrape(jfast), "jfast_metrics_collect_failed")).toBeUndefined();
  });
});
