import { afterEach, describe, expect, it } from "vitest";
import { createPostgresBackend, type PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { createPgDatabase, type PgDatabase } from "../../src/database/pg-database.js";
import { makeJob } from "../conformance/harness.js";
import { eventually, openTestBackend, PG_URL, silentLogger, withAdmin } from "./pg-test-env.js";

/**
 * LISTEN/NOTIFY between two "processes" (two pools, two backends on one schema), the due-time timer for
 * delayed jobs, and the LISTEN connection coming back after the server dropped it. Every wait is armed
 * with a 60 s poll interval: returning well before it means the wake-up worked, not the poll.
 */
describe("postgres: wake-ups", () => {
  let env: Awaited<ReturnType<typeof openTestBackend>> | null = null;
  let other: { db: PgDatabase; backend: PostgresBackend } | null = null;
  afterEach(async () => {
    await other?.backend.close();
    await other?.db.close();
    other = null;
    await env?.cleanup();
    env = null;
  });

  const POLL_MS = 60_000;

  async function twoProcesses() {
    env = await openTestBackend();
    const db = createPgDatabase({ url: PG_URL, schema: env.schema, poolSize: 2, logger: silentLogger });
    other = { db, backend: createPostgresBackend({ db, schema: env.schema, queue: "jfast.jobs", logger: silentLogger }) };
    return { waiting: env.backend, enqueuer: other.backend };
  }

  async function timedWait(backend: PostgresBackend, during?: () => Promise<unknown>): Promise<number> {
    const controller = new AbortController();
    const started = Date.now();
    const wait = backend.waitForWork({ signal: controller.signal, timeoutMs: POLL_MS });
    await during?.();
    await wait;
    controller.abort();
    return Date.now() - started;
  }

  it("a job enqueued by another process wakes an idle worker", async () => {
    const { waiting, enqueuer } = await twoProcesses();
    const elapsed = await timedWait(waiting, async () => {
      await new Promise((r) => setTimeout(r, 100));
      await enqueuer.enqueue({ jobs: [makeJob()] });
    });
    expect(elapsed).toBeLessThan(POLL_MS / 2);
    expect(await waiting.claim({ workerId: "w", limit: 1, leaseMs: 30_000 })).toHaveLength(1);
  });

  it("an idle worker wakes when a delayed job comes due, not before and not at the poll", async () => {
    const { waiting, enqueuer } = await twoProcesses();
    const job = makeJob({ delayMs: 800 });
    await enqueuer.enqueue({ jobs: [job] });
    // The enqueue's own notification may still be in flight: wait until the worker sleeps on the timer.
    let elapsed = 0;
    await eventually("a wait that ends when the job is due", async () => {
      elapsed = await timedWait(waiting);
      return Date.now() >= job.availableAt.getTime();
    });
    expect(elapsed).toBeLessThan(POLL_MS / 2);
    expect((await waiting.claim({ workerId: "w", limit: 1, leaseMs: 30_000 })).map((j) => j.id)).toEqual([job.id]);
  });

  it("listens again after the server drops the LISTEN connection", async () => {
    const { waiting, enqueuer } = await twoProcesses();
    // Listening, and the table emptied again (a due job would end the next wait without any notification).
    await timedWait(waiting, () => enqueuer.enqueue({ jobs: [makeJob()] }));
    const [first] = await waiting.claim({ workerId: "w", limit: 1, leaseMs: 30_000 });
    await waiting.complete({ workerId: "w", job: first! });
    const channel = waiting.channel;
    const listenerPid = () =>
      withAdmin(async (c) => {
        const { rows } = await c.query(
          "SELECT pid FROM pg_stat_activity WHERE datname = 'test' AND query = $1",
          [`LISTEN ${channel}`],
        );
        return rows[0]?.pid as number | undefined;
      });
    const before = await eventually("the LISTEN connection", listenerPid);
    await withAdmin((c) => c.query("SELECT pg_terminate_backend($1)", [before]));
    const after = await eventually("a new LISTEN connection", async () => {
      const pid = await listenerPid();
      return pid && pid !== before ? pid : null;
    });
    expect(after).not.toBe(before);

    const elapsed = await timedWait(waiting, async () => {
      await new Promise((r) => setTimeout(r, 100));
      await enqueuer.enqueue({ jobs: [makeJob()] });
    });
    expect(elapsed).toBeLessThan(POLL_MS / 2);
  });
});
