import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { jobsToColumns, jsonbText } from "../../src/backends/postgres/job-rows.js";
import { SQL } from "../../src/backends/postgres/load-sql.js";
import { workerLostError } from "../../src/core/queue-backend.js";
import { makeJob } from "../conformance/harness.js";
import { openTestBackend, PG_URL } from "./pg-test-env.js";

/**
 * A claim commits without waiting for the WAL flush (docs/postgres.md#durability-of-claims): it sets
 * synchronous_commit off for its own transaction, and for nothing else. Enqueues and outcomes stay durable.
 */
describe("postgres: the claim's commit", () => {
  let env: Awaited<ReturnType<typeof openTestBackend>> | null = null;
  let client: pg.Client | null = null;
  afterEach(async () => {
    await client?.end();
    client = null;
    await env?.cleanup();
    env = null;
  });

  it("is asynchronous for the claim's transaction only; an enqueue in the same session stays synchronous", async () => {
    env = await openTestBackend();
    client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${env.schema}` });
    await client.connect();
    const setting = async () => (await client!.query<{ synchronous_commit: string }>("SHOW synchronous_commit")).rows[0]!.synchronous_commit;
    const jobs = [makeJob(), makeJob()];
    const server = await setting();
    expect(server).not.toBe("off");

    await client.query("BEGIN");
    await client.query(SQL.enqueue, ["jfast.jobs", ...jobsToColumns(jobs)]);
    expect(await setting()).toBe(server);
    await client.query("COMMIT");

    await client.query("BEGIN");
    const claimed = await client.query(SQL.claim, ["jfast.jobs", 10, "w1", 30_000, jsonbText(workerLostError(0)), []]);
    expect(claimed.rows.map((r: { id: string }) => r.id)).toEqual(jobs.map((j) => j.id));
    expect(await setting()).toBe("off");
    await client.query("COMMIT");
    // The next transaction of the same connection is back to the server's setting.
    expect(await setting()).toBe(server);
  });

  it("with durable_claims commits under the server's setting, and the backend claims through that statement", async () => {
    env = await openTestBackend({ durableClaims: true });
    client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${env.schema}` });
    await client.connect();
    const setting = async () => (await client!.query<{ synchronous_commit: string }>("SHOW synchronous_commit")).rows[0]!.synchronous_commit;
    const server = await setting();
    const first = [makeJob(), makeJob()];
    await env.backend.enqueue({ jobs: first });

    await client.query("BEGIN");
    const claimed = await client.query(SQL.claimDurable, ["jfast.jobs", 1, "w1", 30_000, jsonbText(workerLostError(0)), []]);
    expect(claimed.rows.map((r: { id: string }) => r.id)).toEqual([first[0]!.id]);
    expect(await setting()).toBe(server);
    await client.query("COMMIT");

    await env.cleanup();
    // One connection, so the backend's prepared statements are those of the session asked below.
    env = await openTestBackend({ durableClaims: true, poolSize: 1 });
    const job = makeJob();
    await env.backend.enqueue({ jobs: [job] });
    expect((await env.backend.claim({ workerId: "w2", limit: 10, leaseMs: 30_000 })).map((j) => j.id)).toEqual([job.id]);
    const prepared = await env.database.sql.query<{ name: string; statement: string }>("SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'jfast_claim%'");
    expect(prepared.map((r) => r.name)).toEqual(["jfast_claim_durable"]);
    expect(prepared[0]!.statement).not.toContain("set_config(");
  });
});
