import { afterEach, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import { openTestBackend, withAdmin } from "./pg-test-env.js";

/**
 * A batch of more than 2 000 new jobs is written as slices of 1 000 rows, one statement each, in one
 * transaction, the next slice built while the server inserts the one before (postgres-backend.ts,
 * insertPipelined). It must behave as one statement would: every job stored in enqueue order, or none.
 */
describe("postgres: a large batch of new jobs", () => {
  let env: Awaited<ReturnType<typeof openTestBackend>> | null = null;
  afterEach(async () => {
    await env?.cleanup();
    env = null;
  });

  it("stores every job of a 3 500-job batch, in enqueue order, with one wake-up", async () => {
    env = await openTestBackend();
    const jobs = Array.from({ length: 3500 }, (_, i) => new Job({ task: "bulk.item", payload: { i } }));
    expect(await env.backend.enqueue({ jobs })).toEqual({ inserted: jobs.map((j) => j.id) });
    const rows = await env.database.sql.query<{ id: string; payload: { i: number } }>("SELECT id, payload FROM jfast_jobs ORDER BY seq");
    expect(rows.map((r) => r.id)).toEqual(jobs.map((j) => j.id));
    expect(rows.map((r) => r.payload.i)).toEqual(jobs.map((_, i) => i));
    // One transaction: the rows share its transaction id.
    const [xids] = await env.database.sql.query<{ n: number }>("SELECT count(DISTINCT xmin::text)::int AS n FROM jfast_jobs");
    expect(xids!.n).toBe(1);
  });

  it("stores none of them when a row of a later slice is refused", async () => {
    env = await openTestBackend();
    const schema = env.schema;
    await withAdmin(async (c) => {
      await c.query(`CREATE FUNCTION "${schema}".refuse() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.task = 'bulk.refused' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`);
      await c.query(`CREATE TRIGGER refuse BEFORE INSERT ON "${schema}".jfast_jobs FOR EACH ROW EXECUTE FUNCTION "${schema}".refuse()`);
    });
    // Job 2 700 is in the third slice: the first two were inserted (not committed) when it fails.
    const jobs = Array.from({ length: 3000 }, (_, i) => new Job({ task: i === 2700 ? "bulk.refused" : "bulk.item" }));
    await expect(env.backend.enqueue({ jobs })).rejects.toMatchObject({ code: "BACKEND_QUERY_FAILED" });
    const [count] = await env.database.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM jfast_jobs");
    expect(count!.n).toBe(0);
    // The same Job objects again (the first attempt may have committed, for all the caller knows): they go
    // the checking way (ON CONFLICT) now, and are stored once the refusal is gone.
    await withAdmin((c) => c.query(`DROP TRIGGER refuse ON "${schema}".jfast_jobs`));
    expect((await env.backend.enqueue({ jobs })).inserted).toHaveLength(3000);
    const [after] = await env.database.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM jfast_jobs");
    expect(after!.n).toBe(3000);
  });
});
