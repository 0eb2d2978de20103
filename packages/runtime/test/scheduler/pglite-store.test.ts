import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { migrate } from "../../src/database/migrate.js";
import { createPgliteDatabase, type PgliteDatabase } from "../../src/database/pglite-database.js";
import { createSchedule } from "../../src/scheduler/schedule.js";
import { createPostgresScheduleStore } from "../../src/scheduler/stores/postgres-store.js";
import { tickJob } from "../../src/scheduler/tick-job.js";

/** The embedded database runs the same SQL: the scheduler works in a service with no PostgreSQL server. */
describe("PostgreSQL schedule store on embedded PGlite", () => {
  let db: PgliteDatabase;
  let backend: PostgresBackend;

  // Starting PGlite (initdb in WebAssembly) takes seconds, far more on a loaded machine: once per file.
  beforeAll(async () => {
    db = await createPgliteDatabase({ dataDir: "memory://", schema: "jfast" });
    await migrate({ db, schema: "jfast" });
    backend = new PostgresBackend({ db, schema: "jfast", queue: "jfast.jobs" });
    await backend.setup();
  }, 240_000);

  afterAll(async () => {
    await backend.close();
    await db.close();
  });

  it("claims once, in one transaction with the job, never backwards, and prunes all but the last", async () => {
    const schedule = createSchedule("report.hourly", { cron: "@hourly" });
    const store = createPostgresScheduleStore({
      db,
      enqueue: (jobs) => backend.enqueue({ jobs }),
      enqueueWithin: (executor, jobs) => backend.enqueueWithin({ executor, jobs }),
    });
    const t = Date.parse("2024-06-01T10:00:00Z");
    const results = await Promise.all([1, 2, 3].map(() => store.claim({ name: schedule.name, tick: t, job: tickJob(schedule, t) })));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await store.claim({ name: schedule.name, tick: t + 3_600_000, job: tickJob(schedule, t + 3_600_000) })).toBe(true);
    expect(await store.claim({ name: schedule.name, tick: t, job: tickJob(schedule, t) })).toBe(false);
    expect(await store.lastTicks({ names: [schedule.name] })).toEqual(new Map([[schedule.name, t + 3_600_000]]));
    expect(await store.prune({ before: Date.now() + 60_000 })).toBe(1);
    const jobs = await db.query<{ n: number }>("SELECT count(*)::integer AS n FROM jfast_jobs");
    expect(jobs[0]!.n).toBe(2);
  });
});
