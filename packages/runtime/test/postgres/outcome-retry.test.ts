import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { defineTask } from "../../src/core/define-task.js";
import { createLogger } from "../../src/observability/logger.js";
import { Worker } from "../../src/worker/worker.js";
import { makeJob } from "../conformance/harness.js";
import { eventually, openTestBackend, PG_URL } from "./pg-test-env.js";

/**
 * A completion whose connection dies under it (the server restarting, an administrator terminating the backend)
 * is written again on a new connection while the job's lease holds, instead of leaving the job to run again when
 * the lease expires. The fault is real: the completion's UPDATE is held on a row lock, and its server process is
 * terminated while it waits.
 */
describe("postgres: a completion whose connection is terminated", () => {
  let env: Awaited<ReturnType<typeof openTestBackend>> | null = null;
  let worker: Worker | null = null;
  const clients: pg.Client[] = [];
  afterEach(async () => {
    await worker?.stop({ graceMs: 0 });
    worker = null;
    for (const client of clients.splice(0)) await client.end().catch(() => undefined);
    await env?.cleanup();
    env = null;
  });

  async function admin(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    clients.push(client);
    return client;
  }

  it("is written on a new connection, and the job does not run again", async () => {
    env = await openTestBackend();
    const { schema } = env;
    const logged: Array<{ level: string; msg: string }> = [];
    const logger = createLogger({ service: "outcome-retry", level: "info", write: (line: string) => logged.push(JSON.parse(line) as { level: string; msg: string }) });
    let runs = 0;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const work = defineTask("retry.gated", async () => {
      runs += 1;
      await gate;
    });
    const job = makeJob({ task: "retry.gated" });
    await env.backend.enqueue({ jobs: [job] });
    worker = new Worker({
      backend: env.backend,
      lookup: (name) => (name === work.name ? work : undefined),
      execute: (definition, j, cancellation) =>
        Promise.resolve(definition.handler(j.payload, { ctx: { serviceName: "outcome-retry", require: <T,>() => undefined as T }, job: j, session: undefined, signal: cancellation.signal, locals: {}, progress: () => undefined, log: { info() {}, warn() {}, error() {} } })),
      logger,
      concurrency: 1,
      // Long enough that only a second write, not the lease, can settle the job within the test.
      leaseMs: 60_000,
      backoffBaseMs: 50,
      pollIntervalMs: 1000,
      defaultMaxAttempts: 3,
    });
    worker.start();
    await eventually("the handler running", async () => runs === 1);

    // Hold the job's row, let the handler end: the completion's UPDATE waits on the lock.
    const holder = await admin();
    await holder.query("BEGIN");
    await holder.query(`SELECT 1 FROM "${schema}".jfast_jobs WHERE id = $1 FOR UPDATE`, [job.id]);
    open();
    const killer = await admin();
    const waiting = await eventually("the completion waiting on the row lock", async () => {
      const { rows } = await killer.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> $1 AND query LIKE '%jfast_jobs%' AND query LIKE '%completed%'`,
        [(holder as unknown as { processID: number }).processID],
      );
      return rows.length === 1 ? rows[0]!.pid : null;
    });
    await killer.query("SELECT pg_terminate_backend($1)", [waiting]);
    await holder.query("COMMIT");

    await eventually("the job completed", async () => {
      const { rows } = await killer.query<{ state: string }>(`SELECT state FROM "${schema}".jfast_jobs WHERE id = $1`, [job.id]);
      return rows[0]?.state === "completed";
    });
    expect(runs).toBe(1);
    expect(logged.some((l) => l.msg === "recorded the job's outcome once the backend was back")).toBe(true);
    expect(logged.some((l) => l.msg.startsWith("could not record the job's outcome"))).toBe(false);
  });
});
