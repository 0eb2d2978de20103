import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXACT_COUNT_MAX } from "../../src/backends/postgres/admin.js";
import { SQL } from "../../src/backends/postgres/load-sql.js";
import { openTestBackend } from "./pg-test-env.js";

/**
 * Depths per task (the admin's queues view, the jfast_queue_depth gauge) with a backlog far past what is read per
 * state: totals exact, the split by task scaled from the rows read, and never a scan of the whole table — which is
 * what grouping every ready row by task became once the backlog was a large part of jfast_jobs.
 */
/** Entries counted at most per state, as the backend passes it. */
const CAP = EXACT_COUNT_MAX + 1;

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

  it("reads at most 10 000 rows of jfast_jobs per state besides counts of the open index, and never scans the table", async () => {
    const cases: Array<[string, string, unknown[]]> = [
      ["depths-by-task", SQL.depthsByTask, [QUEUE, null, 10_000, 1_000, CAP]],
      ["depths-by-task of a tenant", SQL.depthsByTask, [QUEUE, "acme", 10_000, 1_000, CAP]],
      ["depths", SQL.depths, [QUEUE, 1_000, CAP]],
    ];
    for (const [name, sql, params] of cases) {
      const [row] = await env.database.sql.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params);
      let reads = 0;
      let counts = 0;
      walk(row!["QUERY PLAN"][0].Plan, null, (node) => {
        if (node["Relation Name"] !== "jfast_jobs") return;
        expect(node["Node Type"], name).not.toBe("Seq Scan");
        // Totals are counts of open-index entries: nodes that produce no column (an index-only scan, or a bitmap
        // heap scan where the visibility map is behind). Whatever reads a job's state, task or tenant reads a
        // bounded head of the rows. Reading every live job's state was a sequential scan past a large backlog.
        if (node["Plan Width"] === 0) {
          expect(node["Index Name"] ?? node.Plans?.[0]?.["Index Name"], name).toBe("jfast_jobs_open_idx");
          // A count that checks each row (its state) is a read of every live row, not a count of entries.
          expect(node.Filter, name).toBeUndefined();
          counts += 1;
          return;
        }
        reads += 1;
        expect(node["Actual Rows"]! * node["Actual Loops"]!, name).toBeLessThanOrEqual(10_000);
      });
      expect(reads, name).toBeGreaterThan(0);
      expect(counts, name).toBeGreaterThan(0);
    }
  });

  it("finds the running jobs behind a paused task's due backlog, reading only a bounded head of the rest", async () => {
    // Another queue in the same table: 300 due jobs of a paused task older than everything, then 50 running jobs
    // (5 of the paused task: claimed before the pause), then 5 000 ready ones and 700 scheduled. Rows read at
    // most: 100, so the running jobs are found only if the paused task's backlog is passed over, not counted.
    const Q = "jfast.paused";
    await env.database.sql.query(`
      INSERT INTO jfast_paused_tasks (queue, task) VALUES ('${Q}', 'p.held');
      INSERT INTO jfast_jobs (id, queue, task, payload, state, max_attempts, available_at)
      SELECT 'p-held-' || g, '${Q}', 'p.held', '{}', 'ready', 3, now() - interval '3 hours' + g * interval '1 millisecond' FROM generate_series(1, 300) g;
      INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, available_at, locked_by, locked_until)
      SELECT 'p-running-' || g, '${Q}', CASE WHEN g <= 5 THEN 'p.held' ELSE 'p.go' END, '{}', 'running', 1, 3,
             now() - interval '2 hours' + g * interval '1 millisecond', 'w', now() + interval '1 minute'
      FROM generate_series(1, 50) g;
      INSERT INTO jfast_jobs (id, queue, task, payload, state, max_attempts, available_at)
      SELECT 'p-ready-' || g, '${Q}', 'p.go', '{}', 'ready', 3, now() - interval '1 hour' + g * interval '1 millisecond' FROM generate_series(1, 5000) g;
      INSERT INTO jfast_jobs (id, queue, task, payload, state, max_attempts, available_at)
      SELECT 'p-later-' || g, '${Q}', 'p.go', '{}', 'ready', 3, now() + interval '1 day' FROM generate_series(1, 700) g;
    `);
    await env.database.sql.query("VACUUM (ANALYZE) jfast_jobs");
    const [depths] = await env.database.sql.query<Record<string, string | boolean>>(SQL.depths, [Q, 100, CAP]);
    expect(Object.fromEntries(Object.entries(depths!).map(([k, v]) => [k, typeof v === "boolean" ? v : Number(v)]))).toEqual({
      ready: 5_300,
      scheduled: 700,
      running: 50,
      dead: 0,
      more: false,
      due_capped: false,
      scheduled_capped: false,
    });

    const rows = await env.database.sql.query<{ task: string | null; ready: string; scheduled: string; running: string }>(SQL.depthsByTask, [Q, null, 100, 100, CAP]);
    const total = (state: "ready" | "scheduled" | "running") => rows.filter((r) => r.task !== null).reduce((n, r) => n + Number(r[state]), 0);
    // The totals agree with depths.sql; every running job is read, so their split is exact; the ready ones' split
    // is scaled from the rows read (an estimate here).
    const running = Object.fromEntries(rows.filter((r) => r.task !== null).map((r) => [r.task, Number(r.running)]));
    expect(running).toEqual({ "p.held": 5, "p.go": 45 });
    expect(total("running")).toBe(50);
    expect(total("scheduled")).toBe(700);
    expect(Math.abs(total("ready") - 5_300)).toBeLessThanOrEqual(2);

    const [plan] = await env.database.sql.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${SQL.depths}`, [Q, 100, CAP]);
    walk(plan!["QUERY PLAN"][0].Plan, null, (node) => {
      if (node["Relation Name"] !== "jfast_jobs" || node["Plan Width"] === 0) return;
      expect(node["Actual Rows"]! * node["Actual Loops"]!).toBeLessThanOrEqual(100);
    });
  });

  it("reads deeper when the head it read ends on a running job, until it finds the end of the running ones", async () => {
    // 1 500 running jobs (more than the first read of 1 000 rows holds), then 400 ready ones.
    const Q = "jfast.deep";
    await env.database.sql.query(`
      INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, available_at, locked_by, locked_until)
      SELECT 'd-running-' || g, '${Q}', 'd.t', '{}', 'running', 1, 3, now() - interval '2 hours' + g * interval '1 millisecond', 'w', now() + interval '1 minute'
      FROM generate_series(1, 1500) g;
      INSERT INTO jfast_jobs (id, queue, task, payload, state, max_attempts, available_at)
      SELECT 'd-ready-' || g, '${Q}', 'd.t', '{}', 'ready', 3, now() - interval '1 hour' + g * interval '1 millisecond' FROM generate_series(1, 400) g;
    `);
    const [first] = await env.database.sql.query<{ running: string; more: boolean }>(SQL.depths, [Q, 1_000, CAP]);
    expect([Number(first!.running), first!.more]).toEqual([1_000, true]);
    const deep = await openTestBackend({ schema: env.schema, queue: Q });
    try {
      expect(await deep.backend.depths()).toEqual({ ready: 400, scheduled: 0, running: 1_500, dead: 0 });
      const byTask = await deep.backend.depthsByTask();
      expect(byTask.tasks["d.t"]).toEqual({ ready: 400, scheduled: 0, running: 1_500, dead: 0 });
    } finally {
      await deep.backend.close();
      await deep.database.close();
    }
  });
});

describe("postgres: depths of a backlog past the exact count", () => {
  let env: Awaited<ReturnType<typeof openTestBackend>>;
  const QUEUE = "jfast.huge";
  const READY = 150_000;
  const LATER = 60_000;

  beforeAll(async () => {
    env = await openTestBackend({ queue: QUEUE });
    // Two ready jobs of task a for every one of b, 20 running ahead of them, 60 000 scheduled, and finished rows of
    // another queue around them; no VACUUM or ANALYZE: a backlog that just arrived, with statistics behind it.
    await env.database.sql.query(`
      INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, available_at, locked_by, locked_until)
      SELECT 'run-' || g, '${QUEUE}', 'h.a', '{}', 'running', 1, 3, now() - interval '2 hours', 'w', now() + interval '1 minute'
      FROM generate_series(1, 20) g;
      INSERT INTO jfast_jobs (id, queue, task, payload, state, max_attempts, available_at)
      SELECT 'r-' || g, '${QUEUE}', CASE WHEN g % 3 = 2 THEN 'h.b' ELSE 'h.a' END, '{}', 'ready', 3, now() - interval '1 hour' + g * interval '1 millisecond'
      FROM generate_series(1, ${READY}) g;
      INSERT INTO jfast_jobs (id, queue, task, payload, state, max_attempts, available_at)
      SELECT 's-' || g, '${QUEUE}', 'h.a', '{}', 'ready', 3, now() + interval '1 day' FROM generate_series(1, ${LATER}) g;
      INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, finished_at)
      SELECT 'other-' || g, 'jfast.other', 'h.a', '{}', 'completed', 1, 3, now() FROM generate_series(1, 100000) g;
    `);
  }, 180_000);

  afterAll(async () => {
    await env?.cleanup();
  });

  it("counts each state up to the cap and estimates the rest from a sample of the table, saying so", async () => {
    const depths = await env.backend.depths();
    expect(depths.estimated).toBe(true);
    expect(depths.running).toBe(20);
    // Far past the 50 001 entries counted, near the real backlog (a sample of pages: within a few percent).
    expect(depths.ready).toBeGreaterThan(READY * 0.8);
    expect(depths.ready).toBeLessThan(READY * 1.2);
    expect(depths.scheduled).toBeGreaterThan(LATER * 0.8);
    expect(depths.scheduled).toBeLessThan(LATER * 1.2);
    // The same table read twice gives the same estimate (the sample's pages are chosen by a fixed seed).
    expect(await env.backend.depths()).toEqual(depths);

    const { tasks, exact } = await env.backend.depthsByTask();
    expect(exact).toBe(false);
    expect(tasks["h.a"]!.ready).toBeGreaterThan(READY * (2 / 3) * 0.8);
    expect(tasks["h.a"]!.ready).toBeLessThan(READY * (2 / 3) * 1.2);
    expect(tasks["h.b"]!.ready).toBeGreaterThan(READY * (1 / 3) * 0.8);
    expect(tasks["h.b"]!.ready).toBeLessThan(READY * (1 / 3) * 1.2);
    expect(tasks["h.a"]!.running).toBe(20);
    expect(tasks["h.a"]!.scheduled).toBe(depths.scheduled);
  });

  it("reads at most the cap's entries per count, and the estimate samples pages instead of reading the backlog", async () => {
    const [row] = await env.database.sql.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${SQL.depths}`, [QUEUE, 1_000, CAP]);
    walk(row!["QUERY PLAN"][0].Plan, null, (node) => {
      if (node["Relation Name"] !== "jfast_jobs") return;
      expect(node["Node Type"]).not.toBe("Seq Scan");
      expect(node["Actual Rows"]! * node["Actual Loops"]!).toBeLessThanOrEqual(CAP);
    });
    const [sample] = await env.database.sql.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${SQL.depthsEstimate}`, [QUEUE, 1_000]);
    const scans: string[] = [];
    walk(sample!["QUERY PLAN"][0].Plan, null, (node) => {
      if (node["Relation Name"] === "jfast_jobs") scans.push(node["Node Type"]);
    });
    expect(scans).toEqual(["Sample Scan"]);
  });
});

interface PlanNode {
  "Node Type": string;
  "Subplan Name"?: string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Plan Width"?: number;
  Filter?: string;
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
