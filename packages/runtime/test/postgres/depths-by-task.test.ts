import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SQL } from "../../src/backends/postgres/load-sql.js";
import { openTestBackend } from "./pg-test-env.js";

/**
 * Depths per task (the admin's queues view, the jfast_queue_depth gauge) with a backlog far past what is read per
 * state: totals exact, the split by task scaled from the rows read, and never a scan of the whole table — which is
 * what grouping every ready row by task became once the backlog was a large part of jfast_jobs.
 */
describe("postgres: depths per task on a large backlog", () => {
  let env: Awaited<ReturnType<typeof openTestBackend>>;
  const QUEUE = "jfast.jobs";
  const READY = 30_000;

  beforeAll(async () => {
    env = await openTestBackend({ queue: QUEUE });
    // Two ready jobs of task a for every one of task b, interleaved in claim order (any run of them has that mix);
    // one tenant in three; a few scheduled, and a few running (due before the backlog, as claims take the oldest
    // first); four times as many finished rows around them.
    await env.database.sql.query(`
      INSERT INTO jfast_jobs (id, queue, task, payload, state, max_attempts, available_at, tenant_id)
      SELECT 'ready-' || g, '${QUEUE}', CASE WHEN g % 3 = 2 THEN 'big.b' ELSE 'big.a' END, '{}', 'ready', 3,
             now() - interval '1 hour' + g * interval '1 millisecond', CASE WHEN g % 3 = 0 THEN 'acme' END
      FROM generate_series(1, ${READY}) g;
      INSERT INTO jfast_jobs (id, queue, task, payload, state, max_attempts, available_at)
      SELECT 'later-' || g, '${QUEUE}', 'big.c', '{}', 'ready', 3, now() + interval '1 day' FROM generate_series(1, 7) g;
      INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, available_at, locked_by, locked_until)
      SELECT 'running-' || g, '${QUEUE}', 'big.c', '{}', 'running', 1, 3, now() - interval '2 hours', 'w', now() + interval '1 minute'
      FROM generate_series(1, 3) g;
      INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, finished_at)
      SELECT 'done-' || g, '${QUEUE}', 'big.a', '{}', 'completed', 1, 3, now() FROM generate_series(1, 120000) g;
    `);
    // As autovacuum leaves a table: statistics and the visibility map current (index-only counts rely on it).
    await env.database.sql.query("VACUUM (ANALYZE) jfast_jobs");
  }, 180_000);

  afterAll(async () => {
    await env?.cleanup();
  });

  it("keeps the totals exact and scales each task's share of the rows read, saying it is an estimate", async () => {
    const { tasks, exact } = await env.backend.depthsByTask();
    expect(exact).toBe(false);
    expect(tasks["big.a"]!.ready + tasks["big.b"]!.ready).toBeGreaterThanOrEqual(READY - 1);
    expect(tasks["big.a"]!.ready + tasks["big.b"]!.ready).toBeLessThanOrEqual(READY + 1);
    expect(tasks["big.a"]!.ready).toBeGreaterThanOrEqual(19_990);
    expect(tasks["big.a"]!.ready).toBeLessThanOrEqual(20_010);
    // The states with few jobs were read whole: exact.
    expect(tasks["big.c"]).toEqual({ ready: 0, scheduled: 7, running: 3, dead: 0 });
    expect(await env.backend.depths()).toEqual({ ready: READY, scheduled: 7, running: 3, dead: 0 });
  });

  it("estimates one tenant's share the same way", async () => {
    const { tasks, exact } = await env.backend.depthsByTask({ tenantId: "acme" });
    expect(exact).toBe(false);
    // Every third ready job is acme's, all of them of task a.
    expect(tasks["big.a"]!.ready).toBeGreaterThanOrEqual(9_990);
    expect(tasks["big.a"]!.ready).toBeLessThanOrEqual(10_010);
    expect(tasks["big.b"]).toBeUndefined();
    expect(tasks["big.c"]).toBeUndefined();
  });

  it("reads at most 10 000 rows of jfast_jobs per state besides the counts, and never scans the table", async () => {
    for (const tenant of [null, "acme"]) {
      const [row] = await env.database.sql.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${SQL.depthsByTask}`, [QUEUE, tenant, 10_000]);
      let reads = 0;
      walk(row!["QUERY PLAN"][0].Plan, null, (node, cte) => {
        if (node["Relation Name"] !== "jfast_jobs") return;
        expect(node["Node Type"]).not.toBe("Seq Scan");
        // The totals count every live job of a state through the open index (an index scan, or a bitmap heap scan
        // of those rows), reading each one's state. Either way, finished rows are not read.
        if (cte === "CTE totals") {
          expect(node["Index Name"] ?? node.Plans?.[0]?.["Index Name"]).toBe("jfast_jobs_open_idx");
          return;
        }
        reads += 1;
        expect(node["Actual Rows"]! * node["Actual Loops"]!).toBeLessThanOrEqual(10_000);
      });
      expect(reads).toBeGreaterThan(0);
    }
  });
});

interface PlanNode {
  "Node Type": string;
  "Subplan Name"?: string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Actual Rows"?: number;
  "Actual Loops"?: number;
  Plans?: PlanNode[];
}

/** Visits every plan node with the name of the CTE it belongs to ("CTE totals"), or null outside one. */
function walk(node: PlanNode, cte: string | null, visit: (node: PlanNode, cte: string | null) => void): void {
  const inside = node["Subplan Name"]?.startsWith("CTE ") ? node["Subplan Name"] : cte;
  visit(node, inside);
  for (const child of node.Plans ?? []) walk(child, inside, visit);
}
