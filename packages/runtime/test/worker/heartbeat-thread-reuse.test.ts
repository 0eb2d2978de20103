import { randomUUID } from "node:crypto";
import { readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import type { Logger } from "../../src/core/logger.js";
import { createPostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { openDatabase } from "../../src/database/open-database.js";
import { Heartbeat } from "../../src/worker/heartbeat.js";
import { blockEventLoop } from "../conformance/harness.js";
import { eventually, PG_HOST, PG_PORT, silentLogger, withAdmin } from "../postgres/pg-test-env.js";

/**
 * The heartbeat thread is one per process. When the last worker stops, its connection closes at once, and the
 * thread itself stays a while (its connections closed): a worker started again soon after reuses it, rather than
 * pay a thread's start (a V8 isolate, the driver loaded, a connection) a second time, and its leases are kept as
 * before. A database of its own, so that the heartbeat connections counted are this file's alone.
 */
describe("the heartbeat thread between two workers of one process", () => {
  it("closes its connection when the last worker stops, and serves the next worker without a new thread", async () => {
    const dbName = `jfast_hb_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
    await withAdmin((c) => c.query(`CREATE DATABASE ${dbName}`));
    const url = `postgres://postgres@${PG_HOST}:${PG_PORT}/${dbName}`;
    const database = await openDatabase({ config: { url, readUrl: null, rls: false, poolSize: 2, inboxRetentionDays: 7, schema: "public" }, root: tmpdir(), logger: silentLogger });
    const backend = createPostgresBackend({ db: database.sql, schema: "public", queue: "jfast.jobs", connectionUrl: url, logger: silentLogger });
    const heartbeats: Heartbeat[] = [];
    try {
      await backend.setup();
      const connections = () =>
        withAdmin(async (c) => Number((await c.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'jfast heartbeat'", [dbName])).rows[0]!.n));
      const before = threads();
      const warnings: string[] = [];
      const logger: Logger = { debug: () => undefined, info: () => undefined, warn: (message) => void warnings.push(message), error: () => undefined };
      const start = () => {
        const heartbeat = new Heartbeat({ backend, workerId: `reuse-${randomUUID()}`, leaseMs: 1000, logger, held: () => [held], cancelled: () => undefined });
        heartbeats.push(heartbeat);
        heartbeat.start();
        heartbeat.hold([new Job({ id: held, task: "reuse.quick", payload: {} })]);
        return heartbeat;
      };
      const held = randomUUID();

      const first = start();
      await eventually("the heartbeat thread's connection", async () => ((await connections()) === 1 ? true : null), 20_000);
      const withFirst = threads();
      // The heartbeat thread (Node 22 and later also name it "jfast heartbeat"; Node 20 names every thread "node").
      const started = withFirst.filter((tid) => !before.includes(tid));
      expect(started.length, "a thread started with the first worker").toBeGreaterThan(0);

      first.stop();
      // Closed at once, not when the thread ends: a stopped service keeps no connection open.
      await eventually("the heartbeat connection to close", async () => ((await connections()) === 0 ? true : null), 5_000);
      expect(threads(), "the thread stays, its connection closed").toEqual(expect.arrayContaining(started));

      start();
      await eventually("the heartbeat connection again", async () => ((await connections()) === 1 ? true : null), 10_000);
      expect(threads().filter((tid) => !withFirst.includes(tid)), "no thread started for the second worker").toEqual([]);
      // The reused thread keeps the second worker's leases while its event loop is blocked.
      for (let round = 0; round < 5 && !warnings.some(isStall); round++) {
        blockEventLoop(1000);
        await eventually("the stall to be bridged", async () => (warnings.some(isStall) ? true : null), 3000).catch(() => null);
      }
      expect(warnings.filter(isStall).length, "the reused thread bridged the stall").toBeGreaterThan(0);
    } finally {
      for (const heartbeat of heartbeats) heartbeat.stop();
      await backend.close();
      await database.close();
      await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`));
    }
  }, 90_000);
});

const isStall = (message: string) => message.startsWith("the event loop was blocked");

/** The ids of this process's threads. */
function threads(): string[] {
  return readdirSync("/proc/self/task");
}
