import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import type { Job } from "../../src/core/job.js";
import type { PgDatabase } from "../../src/database/pg-database.js";
import { createSchedule } from "../../src/scheduler/schedule.js";
import { createPostgresScheduleStore } from "../../src/scheduler/stores/postgres-store.js";
import type { ScheduleStore } from "../../src/scheduler/stores/schedule-store.js";
import { tickJob } from "../../src/scheduler/tick-job.js";
import { dropSchema, openPool, uniqueSchema } from "./pg-env.js";

const schedule = createSchedule("report.hourly", { cron: "0 * * * *" });
const TICK = Date.parse("2024-06-01T10:00:00Z");

describe("PostgreSQL schedule store", () => {
  let schema: string;
  let pools: PgDatabase[];
  let backends: PostgresBackend[];

  beforeEach(async () => {
    schema = uniqueSchema("pg");
    pools = [await openPool(schema), await openPool(schema)];
    backends = pools.map((db) => new PostgresBackend({ db, schema, queue: "jfast.jobs" }));
    for (const backend of backends) await backend.setup();
  });

  afterEach(async () => {
    for (const backend of backends) await backend.close();
    for (const pool of pools) await pool.close();
    await dropSchema(schema);
  });

  /** A store over pool `i`, claiming and inserting the job in one transaction. */
  function transactional(i: number): ScheduleStore {
    const backend = backends[i]!;
    return createPostgresScheduleStore({
      db: pools[i]!,
      enqueue: (jobs) => backend.enqueue({ jobs }),
      enqueueWithin: (executor, jobs) => backend.enqueueWithin({ executor, jobs }),
    });
  }

  const count = async (sql: string, params: unknown[] = []) =>
    Number((await pools[0]!.query<{ n: number }>(`SELECT count(*)::integer AS n FROM ${sql}`, params))[0]!.n);

  it("lets one of twenty concurrent claims of a tick from two pools enter", async () => {
    const stores = [transactional(0), transactional(1)];
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => stores[i % 2]!.claim({ name: schedule.name, tick: TICK, job: tickJob(schedule, TICK) })),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await count("jfast_schedules WHERE name = $1", [schedule.name])).toBe(1);
    expect(await count("jfast_jobs WHERE task = $1", ["report.hourly"])).toBe(1);
    expect(await stores[1]!.lastTicks({ names: [schedule.name, "other"] })).toEqual(new Map([[schedule.name, TICK]]));
  });

  it("commits the claim and the job in one transaction: a failure after the job insert leaves neither", async () => {
    const backend = backends[0]!;
    const failing = createPostgresScheduleStore({
      db: pools[0]!,
      enqueue: () => Promise.reject(new Error("not used")),
      enqueueWithin: async (executor, jobs) => {
        await backend.enqueueWithin({ executor, jobs });
        // The job row is written in this transaction; now the transaction fails.
        expect(Number((await executor.query<{ n: number }>("SELECT count(*)::integer AS n FROM jfast_jobs"))[0]!.n)).toBe(1);
        throw new Error("crash between the insert and the commit");
      },
    });
    await expect(failing.claim({ name: schedule.name, tick: TICK, job: tickJob(schedule, TICK) })).rejects.toThrow(/crash between/);
    expect(await count("jfast_schedules")).toBe(0);
    expect(await count("jfast_jobs")).toBe(0);

    expect(await transactional(1).claim({ name: schedule.name, tick: TICK, job: tickJob(schedule, TICK) })).toBe(true);
    expect(await count("jfast_schedules")).toBe(1);
    const [row] = await pools[0]!.query<{ id: string; payload: unknown }>("SELECT id, payload FROM jfast_jobs");
    expect(row!.id).toBe(tickJob(schedule, TICK).id);
    expect(row!.payload).toEqual({ scheduled_for: "2024-06-01T10:00:00.000Z" });
  });

  it("inserts a duplicate job id once", async () => {
    const job = tickJob(schedule, TICK);
    expect((await backends[0]!.enqueue({ jobs: [job] })).inserted).toEqual([job.id]);
    expect((await backends[1]!.enqueue({ jobs: [tickJob(schedule, TICK)] })).inserted).toEqual([]);
    expect(await count("jfast_jobs WHERE id = $1", [job.id])).toBe(1);
  });

  it("never claims a tick before the last claimed one", async () => {
    const store = transactional(0);
    const later = TICK + 3_600_000;
    expect(await store.claim({ name: schedule.name, tick: later, job: tickJob(schedule, later) })).toBe(true);
    expect(await transactional(1).claim({ name: schedule.name, tick: TICK, job: tickJob(schedule, TICK) })).toBe(false);
    expect(await store.lastTicks({ names: [schedule.name] })).toEqual(new Map([[schedule.name, later]]));
    expect(await count("jfast_jobs")).toBe(1);
  });

  it("prunes old claims and keeps each schedule's last", async () => {
    const store = transactional(0);
    for (const hours of [0, 1, 2]) {
      const tick = TICK + hours * 3_600_000;
      await store.claim({ name: "a", tick, job: tickJob({ ...schedule, name: "a" }, tick) });
    }
    await store.claim({ name: "b", tick: TICK, job: tickJob({ ...schedule, name: "b" }, TICK) });
    expect(await store.prune({ before: Date.now() - 60_000 })).toBe(0);
    expect(await store.prune({ before: Date.now() + 60_000 })).toBe(2);
    const rows = await pools[0]!.query<{ name: string; tick: Date }>("SELECT name, tick FROM jfast_schedules ORDER BY name");
    expect(rows.map((r) => [r.name, new Date(r.tick).toISOString()])).toEqual([
      ["a", new Date(TICK + 2 * 3_600_000).toISOString()],
      ["b", new Date(TICK).toISOString()],
    ]);
  });

  it("with a queue elsewhere: claim, then enqueue; a failed enqueue releases the claim", async () => {
    const enqueued: Job[] = [];
    let fail = true;
    const store = createPostgresScheduleStore({
      db: pools[0]!,
      enqueue: async (jobs) => {
        if (fail) throw new Error("broker unreachable");
        enqueued.push(...jobs);
      },
    });
    await expect(store.claim({ name: schedule.name, tick: TICK, job: tickJob(schedule, TICK) })).rejects.toThrow(/broker unreachable/);
    expect(await store.lastTicks({ names: [schedule.name] })).toEqual(new Map());
    fail = false;
    expect(await store.claim({ name: schedule.name, tick: TICK, job: tickJob(schedule, TICK) })).toBe(true);
    expect(await store.claim({ name: schedule.name, tick: TICK, job: tickJob(schedule, TICK) })).toBe(false);
    expect(enqueued.map((j) => j.id)).toEqual([tickJob(schedule, TICK).id]);
  });
});
