import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LIST_WINDOW } from "../../src/core/job-listing.js";
import { SQL, type ListingSql } from "../../src/backends/postgres/load-sql.js";
import { openTestBackend } from "./pg-test-env.js";

/**
 * Listing jobs by state on a large table (docs/admin-api.md#listing-jobs): every statement, in both orders and
 * with and without a cursor, reads through an index and at most LIST_WINDOW entries of jfast_jobs per page, never
 * a scan of the table; and paging with a selective filter walks the backlog a window at a time.
 */
describe("postgres: listing jobs by state on a large table", () => {
  let env: Awaited<ReturnType<typeof openTestBackend>>;
  const QUEUE = "jfast.jobs";

  beforeAll(async () => {
    env = await openTestBackend({ queue: QUEUE });
    // 30 000 due jobs (one in a hundred of task rare), 3 running ahead of them, 2 000 scheduled, 2 000 dead,
    // 120 000 completed and 50 cancelled around them.
    await env.database.sql.query(`
      INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, available_at, locked_by, locked_until)
      SELECT 'running-' || g, '${QUEUE}', 'big.a', '{}', 'running', 1, 3, now() - interval '2 hours', 'w', now() + interval '1 minute'
      FROM generate_series(1, 3) g;
      INSERT INTO jfast_jobs (id, queue, task, payload, state, max_attempts, available_at, tenant_id)
      SELECT 'ready-' || g, '${QUEUE}', CASE WHEN g % 100 = 0 THEN 'big.rare' ELSE 'big.a' END, '{}', 'ready', 3,
             now() - interval '1 hour' + g * interval '1 millisecond', CASE WHEN g % 3 = 0 THEN 'acme' END
      FROM generate_series(1, 30000) g;
      INSERT INTO jfast_jobs (id, queue, task, payload, state, max_attempts, available_at)
      SELECT 'later-' || g, '${QUEUE}', 'big.a', '{}', 'ready', 3, now() + interval '1 day' + g * interval '1 second' FROM generate_series(1, 2000) g;
      INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, died_at)
      SELECT 'dead-' || g, '${QUEUE}', 'big.a', '{}', 'dead', 3, 3, now() - g * interval '1 second' FROM generate_series(1, 2000) g;
      INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, finished_at)
      SELECT 'done-' || g, '${QUEUE}', 'big.a', '{}', CASE WHEN g % 2400 = 0 THEN 'cancelled' ELSE 'completed' END, 1, 3, now()
      FROM generate_series(1, 120000) g;
    `);
    await env.database.sql.query("VACUUM (ANALYZE) jfast_jobs");
  }, 180_000);

  afterAll(async () => {
    await env?.cleanup();
  });

  /** A finished job's place in the listing order (finished_at, seq): a cursor in the middle of the finished jobs. */
  const finishedCursor = async (id: string): Promise<unknown[]> => {
    const [row] = await env.database.sql.query<{ at: string; seq: string }>("SELECT finished_at::text AS at, seq FROM jfast_jobs WHERE id = $1", [id]);
    return [row!.at, row!.seq];
  };

  it("reads through an index and at most a window of rows per page, in every form of every statement", async () => {
    const statements: Array<[string, ListingSql, string, unknown[]]> = [
      ["ready", SQL.listDue, "ready", [String(new Date(Date.now() - 3_600_000).toISOString()), 100]],
      ["running", SQL.listDue, "running", [new Date(Date.now() - 3_600_000).toISOString(), 100]],
      ["scheduled", SQL.listScheduled, "ready", [new Date(Date.now() + 86_400_000 + 500_000).toISOString(), 100]],
      ["dead", SQL.listDeadPage, "dead", [new Date(Date.now() - 1_000_000).toISOString(), 100]],
      ["completed", SQL.listFinished, "completed", await finishedCursor("done-60000")],
      ["cancelled", SQL.listFinished, "cancelled", await finishedCursor("done-60000")],
    ];
    for (const [name, statement, state, cursor] of statements) {
      for (const order of ["oldest", "newest"] as const) {
        for (const form of ["first", "after"] as const) {
          const label = `${name} ${order} ${form}`;
          const params = [QUEUE, state, "big.rare", null, ...(form === "after" ? cursor : [null, null]), LIST_WINDOW, 50];
          const [row] = await env.database.sql.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement[order][form]}`, params);
          let reads = 0;
          walk(row!["QUERY PLAN"][0].Plan, (node) => {
            if (node["Relation Name"] !== "jfast_jobs") return;
            expect(node["Node Type"], label).not.toBe("Seq Scan");
            expect(node["Node Type"], label).toMatch(/Index/);
            reads += node["Actual Rows"]! * node["Actual Loops"]!;
          });
          // The window, plus the page's rows read again by key.
          expect(reads, label).toBeGreaterThan(0);
          expect(reads, label).toBeLessThanOrEqual(LIST_WINDOW + 50);
        }
      }
    }
  });

  it("pages a selective filter through the backlog a window at a time, and reaches every match", async () => {
    const found: string[] = [];
    let after: string | undefined;
    let pages = 0;
    do {
      const page = await env.backend.listJobs({ state: "ready", order: "newest", task: "big.rare", limit: 50, after });
      found.push(...page.rows.map((r) => r.job.id));
      after = page.next ?? undefined;
      pages += 1;
    } while (after && pages < 100);
    expect(found).toHaveLength(300);
    expect(found[0]).toBe("ready-30000");
    expect(pages).toBeGreaterThanOrEqual(30);
    const running = await env.backend.listJobs({ state: "running", order: "oldest", limit: 10 });
    expect(running.rows.map((r) => r.job.id).sort()).toEqual(["running-1", "running-2", "running-3"]);
    const cancelled: string[] = [];
    after = undefined;
    do {
      const page = await env.backend.listJobs({ state: "cancelled", order: "oldest", limit: 50, after });
      cancelled.push(...page.rows.map((r) => r.job.id));
      after = page.next ?? undefined;
    } while (after);
    expect(cancelled).toHaveLength(50);
  }, 120_000);
});

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Actual Rows"?: number;
  "Actual Loops"?: number;
  Plans?: PlanNode[];
}

function walk(node: PlanNode, visit: (node: PlanNode) => void): void {
  visit(node);
  for (const child of node.Plans ?? []) walk(child, visit);
}
