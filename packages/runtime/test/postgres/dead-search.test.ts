import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SQL } from "../../src/backends/postgres/load-sql.js";
import { openTestBackend } from "./pg-test-env.js";

/**
 * Dead letters found by a payload field through the GIN index of migration 0012, on a table with 50 000 dead
 * letters and as many finished rows: the search reads only the rows that contain the value.
 */
describe("postgres: dead letters by payload field", () => {
  let env: Awaited<ReturnType<typeof openTestBackend>>;
  const QUEUE = "jfast.jobs";

  beforeAll(async () => {
    env = await openTestBackend({ queue: QUEUE });
    await env.database.sql.query(`
      INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, finished_at)
      SELECT 'done-' || g, '${QUEUE}', 'bulk.done', json_build_object('customer', json_build_object('id', 'c-' || (g % 5000))), 'completed', 1, 3, now()
      FROM generate_series(1, 50000) g;
      INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, died_at, tenant_id, errors)
      SELECT 'dead-' || g, '${QUEUE}', CASE WHEN g % 2 = 0 THEN 'billing.charge' ELSE 'billing.refund' END,
             json_build_object('customer', json_build_object('id', 'c-' || (g % 5000), 'vip', g % 7 = 0), 'amount', g),
             'dead', 3, 3, now() - g * interval '1 second', CASE WHEN g % 3 = 0 THEN 'acme' END, '[{"message":"x"}]'
      FROM generate_series(1, 50000) g;
      ANALYZE jfast_jobs;
    `);
  }, 180_000);

  afterAll(async () => {
    await env?.cleanup();
  });

  it("reads through jfast_jobs_dead_payload_idx, never scanning the table or the dead letters", async () => {
    const rows = await env.database.sql.query<{ "QUERY PLAN": string }>(`EXPLAIN ${SQL.searchDead}`, [
      QUEUE,
      JSON.stringify({ customer: { id: "c-42" } }),
      null,
      null,
      null,
      null,
      51,
    ]);
    const plan = rows.map((r) => r["QUERY PLAN"]).join("\n");
    expect(plan).toMatch(/Bitmap Index Scan on jfast_jobs_dead_payload_idx/);
    expect(plan).not.toMatch(/Seq Scan on jfast_jobs/);
    expect(plan).not.toMatch(/jfast_jobs_dead_idx/);
  });

  it("finds exactly the matching dead letters, newest first, a keyset page at a time, by task and tenant too", async () => {
    // g % 5000 = 42: g = 42, 5042, ..., 45042 (10 rows); newest death is the smallest g.
    const expected = Array.from({ length: 10 }, (_, i) => `dead-${42 + i * 5000}`);
    const seen: string[] = [];
    let after: string | undefined;
    for (let page = 0; page < 5; page++) {
      const result = await env.backend.searchDead({ payload: { path: ["customer", "id"], equals: "c-42" }, limit: 3, after });
      seen.push(...result.rows.map((d) => d.job.id));
      expect(result.rows.every((d) => (d.job.payload as { customer: { id: string } }).customer.id === "c-42")).toBe(true);
      if (!result.next) break;
      after = result.next;
    }
    expect(seen).toEqual(expected);

    const refunds = await env.backend.searchDead({ payload: { path: ["customer", "id"], equals: "c-42" }, task: "billing.refund", limit: 50 });
    expect(refunds.rows.map((d) => d.job.id)).toEqual([]);
    const charges = await env.backend.searchDead({ payload: { path: ["customer", "id"], equals: "c-42" }, task: "billing.charge", limit: 50 });
    expect(charges.rows).toHaveLength(10);
    const acme = await env.backend.searchDead({ payload: { path: ["customer", "id"], equals: "c-42" }, tenantId: "acme", limit: 50 });
    expect(acme.rows.map((d) => d.job.id)).toEqual(expected.filter((id) => Number(id.slice(5)) % 3 === 0));

    // Types matter as in JSON: a boolean, a number.
    const vip = await env.backend.searchDead({ payload: { path: ["customer", "vip"], equals: true }, limit: 100 });
    expect(vip.rows.length).toBe(100);
    expect(vip.next).not.toBeNull();
    const amount = await env.backend.searchDead({ payload: { path: ["amount"], equals: 777 }, limit: 5 });
    expect(amount.rows.map((d) => d.job.id)).toEqual(["dead-777"]);
    expect((await env.backend.searchDead({ payload: { path: ["amount"], equals: "777" }, limit: 5 })).rows).toEqual([]);
  });
});
