import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import type { Outbox } from "../../src/outbox/outbox.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import { copyFixture, eventually, silentLogger } from "./pg-test-env.js";

/**
 * The default a new service gets: no database url, so PGlite under <root>/.jfast/. One app is started
 * once for the whole file (starting PGlite costs seconds) and the steps run in order.
 */
describe("embedded database (PGlite): the app with no database url", () => {
  const TIMEOUT = 240_000;
  let fixture: Awaited<ReturnType<typeof copyFixture>>;
  let jfast: Jfast | null = null;

  async function startApp(): Promise<Jfast> {
    const app = await createJfast({ root: fixture.root, env: {}, logger: silentLogger });
    await app.start();
    return app;
  }

  afterAll(async () => {
    await jfast?.stop();
    await fixture?.remove();
  }, TIMEOUT);

  it(
    "runs on PGlite under <root>/.jfast with the same schema and SQL",
    async () => {
      fixture = await copyFixture("pglite-embedded");
      jfast = await startApp();
      const database = jfast.require<DatabaseProvider>("database");
      expect(database.driver).toBe("pglite");
      expect(existsSync(path.join(fixture.root, ".jfast", "pglite", "PG_VERSION"))).toBe(true);
      await database.sql.query("CREATE TABLE charges (invoice_id integer NOT NULL, attempt integer NOT NULL)");
      const migrations = await database.sql.query<{ version: number }>("SELECT version FROM jfast_migrations ORDER BY version");
      expect(migrations.map((m) => Number(m.version))[0]).toBe(1);
    },
    TIMEOUT,
  );

  it("outbox.enqueue: the job exists iff the drizzle transaction commits", async () => {
    const app = jfast!;
    const database = app.require<DatabaseProvider>("database");
    const outbox = app.require<Outbox>("outbox");
    const kept = new Job({ task: "billing.record_charge", payload: { invoice_id: 1 } });
    const dropped = new Job({ task: "billing.record_charge", payload: { invoice_id: 2 } });
    await database.transaction((tx) => outbox.enqueue(tx, kept));
    await database
      .transaction(async (tx) => {
        await outbox.enqueue(tx, dropped);
        throw new Error("rolled back");
      })
      .catch(() => undefined);
    const ids = (await database.sql.query<{ id: string }>("SELECT id FROM jfast_jobs")).map((r) => r.id);
    expect(ids).toEqual([kept.id]);
  });

  it("a worker runs it in a TaskSession on the embedded database", async () => {
    const app = jfast!;
    const database = app.require<DatabaseProvider>("database");
    const worker = app.createWorker({ concurrency: 2 });
    worker.start();
    await eventually("the charge written", async () => (await database.sql.query("SELECT 1 FROM charges WHERE invoice_id = 1")).length === 1);
  });

  it("refuses, with the fix, a statement that would wait forever on the single connection", async () => {
    const app = jfast!;
    const queue = app.require<QueueProvider>("queue");
    const job = new Job({ task: "billing.enqueue_inside_session" });
    await queue.enqueue(job);
    const dead = await eventually("the job in dead letters", async () => {
      const info = await queue.backend.getJob({ id: job.id });
      return info?.state === "dead" ? info : null;
    });
    expect(dead.job.errors.at(-1)?.message).toContain("outbox.enqueue(session, job)");
    // The process did not lock up: the database still answers.
    expect(await app.require<DatabaseProvider>("database").sql.query("SELECT 1 AS ok")).toEqual([{ ok: 1 }]);
  });

  it(
    "serves one process: a second app on the same root is refused; after stop, the data is still there",
    async () => {
      const second = await createJfast({ root: fixture.root, env: {}, logger: silentLogger });
      const refused = await second.start().catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: "EMBEDDED_DATABASE_LOCKED" });
      expect((refused as Error).message).toContain("DATABASE_URL");

      await jfast!.stop();
      jfast = await startApp();
      const rows = await jfast.require<DatabaseProvider>("database").sql.query<{ invoice_id: number }>("SELECT invoice_id FROM charges");
      expect(rows).toEqual([{ invoice_id: 1 }]);
    },
    TIMEOUT,
  );
});
