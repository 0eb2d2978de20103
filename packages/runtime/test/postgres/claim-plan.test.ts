import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SQL } from "../../src/backends/postgres/load-sql.js";
import { workerLostError } from "../../src/core/queue-backend.js";
import { jsonbText } from "../../src/backends/postgres/job-rows.js";
import { Job } from "../../src/core/job.js";
import { openTestBackend } from "./pg-test-env.js";

/**
 * Finished rows accumulate in jfast_jobs by design; the claim and /ready must never read them. Proven on
 * the plans PostgreSQL picks for a table that is almost all completed and dead rows.
 */
describe("postgres: query plans on a table full of finished rows", () => {
  let env: Awaited<ReturnType<typeof openTestBackend>>;
  const QUEUE = "jfast.jobs";

  beforeAll(async () => {
    env = await openTestBackend({ queue: QUEUE });
    const { database } = env;
    await database.sql.query(`
      INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, finished_at)
      SELECT 'done-' || g, '${QUEUE}', 'bulk.done', '{}', 'completed', 1, 3, now() FROM generate_series(1, 120000) g;
      INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, died_at, errors)
      SELECT 'dead-' || g, '${QUEUE}', 'bulk.dead', '{}', 'dead', 3, 3, now() - g * interval '1 second', '[{"message":"x"}]'
      FROM generate_series(1, 60000) g;
      INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts)
      SELECT 'ready-' || g, '${QUEUE}', 'bulk.ready', '{}', 'ready', 0, 3 FROM generate_series(1, 20) g;
      INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, locked_by, locked_until)
      SELECT 'running-' || g, '${QUEUE}', 'bulk.running', '{}', 'running', 1, 3, 'w', now() + interval '1 minute' FROM generate_series(1, 5) g;
      ANALYZE jfast_jobs;
    `);
  }, 180_000);

  afterAll(async () => {
    await env?.cleanup();
  });

  async function plan(sql: string, params: unknown[]): Promise<string> {
    const rows = await env.database.sql.query<{ "QUERY PLAN": string }>(`EXPLAIN ${sql}`, params);
    return rows.map((r) => r["QUERY PLAN"]).join("\n");
  }

  it("claims through the open index, never scanning the table", async () => {
    for (const paused of [[], ["bulk.paused", "bulk.other"]]) {
      // With tasks paused the claim reads the same index, the paused tasks a filter on what it reads.
      const text = await plan(SQL.claim, [QUEUE, 10, "w1", 30_000, jsonbText(workerLostError(0)), paused]);
      expect(text).toMatch(/Index Scan using jfast_jobs_claim_idx on jfast_jobs/);
      expect(text).toMatch(/LockRows/);
      expect(text).not.toMatch(/Seq Scan on jfast_jobs/);
    }
  });

  it("still finds the 20 live jobs among 180 000 finished ones", async () => {
    const claimed = await env.backend.claim({ workerId: "w1", limit: 50, leaseMs: 30_000 });
    expect(claimed.map((j) => j.task).sort()).toEqual(Array(20).fill("bulk.ready"));
  });

  it("counts depths without visiting finished rows; the dead count comes from the trigger-kept counter", async () => {
    const text = await plan(SQL.depths, [QUEUE, 10_000, 50_001]);
    expect(text).not.toMatch(/Seq Scan on jfast_jobs/);
    expect(text).not.toMatch(/jfast_jobs_dead_idx/);
    expect(text).toMatch(/jfast_jobs_open_idx/);
    expect(text).toMatch(/jfast_queue_counters/);
    const depths = await env.backend.depths();
    expect(depths).toEqual({ ready: 0, scheduled: 0, running: 25, dead: 60_000 });
  });

  it("updates a large batch by ctid (a TID scan), not by hashing the table, on a live backlog", async () => {
    // A worker with short jobs claims up to 1 000 at a time. On a table that is mostly the backlog itself, a
    // join between the chosen ids and jfast_jobs made the planner read and hash every row on each claim.
    const backlog = await openTestBackend({ queue: QUEUE });
    try {
      await backlog.database.sql.query(`
        INSERT INTO jfast_jobs (id, queue, task, payload) SELECT 'ready-' || g, '${QUEUE}', 'bulk.ready', '{}' FROM generate_series(1, 20000) g;
        ANALYZE jfast_jobs;
      `);
      for (const limit of [500, 1000]) {
        const rows = await backlog.database.sql.query<{ "QUERY PLAN": string }>(`EXPLAIN ${SQL.claim}`, [
          QUEUE, limit, "w1", 30_000, jsonbText(workerLostError(0)), [],
        ]);
        const text = rows.map((r) => r["QUERY PLAN"]).join("\n");
        expect(text).toMatch(/Tid Scan on jfast_jobs/);
        expect(text).not.toMatch(/Seq Scan on jfast_jobs/);
        expect(text).not.toMatch(/Hash Join/);
      }
      const claimed = await backlog.backend.claim({ workerId: "w1", limit: 1000, leaseMs: 30_000 });
      // Oldest first: enqueue order, as the ids were numbered.
      expect(claimed.map((j) => j.id)).toEqual(Array.from({ length: 1000 }, (_, i) => `ready-${i + 1}`));
    } finally {
      await backlog.cleanup();
    }
  });

  it("reads each priority as a range ending now: a backlog of delayed urgent jobs is never walked", async () => {
    const delayed = await openTestBackend({ queue: QUEUE });
    try {
      await delayed.database.sql.query(`
        INSERT INTO jfast_jobs (id, queue, task, payload, priority, available_at)
        SELECT 'later-' || g, '${QUEUE}', 'bulk.later', '{}', g % 5, now() + interval '1 hour' FROM generate_series(1, 50000) g;
        INSERT INTO jfast_jobs (id, queue, task, payload, priority) SELECT 'due-' || g, '${QUEUE}', 'bulk.due', '{}', 7 FROM generate_series(1, 30) g;
        ANALYZE jfast_jobs;
      `);
      const [row] = await delayed.database.sql.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${SQL.claim}`, [
        QUEUE, 10, "w1", 30_000, jsonbText(workerLostError(0)), [],
      ]);
      const scans: PlanNode[] = [];
      walk(row!["QUERY PLAN"][0].Plan, (node) => {
        if (node["Relation Name"] === "jfast_jobs" && node["Node Type"].endsWith("Scan") && node["Node Type"] !== "Tid Scan") scans.push(node);
      });
      expect(scans.map((n) => n["Index Name"])).toEqual(["jfast_jobs_claim_idx"]);
      // Ten index descents (one per priority), the ten due rows of priority 7 read, no delayed row passed over.
      expect(scans[0]!["Actual Loops"]).toBeLessThanOrEqual(10);
      expect(scans[0]!["Rows Removed by Filter"] ?? 0).toBe(0);
      expect(scans[0]!["Actual Rows"]! * scans[0]!["Actual Loops"]!).toBeLessThanOrEqual(20);
      // EXPLAIN ANALYZE ran the claim: the first ten are taken, the next ten come now.
      const claimed = await delayed.backend.claim({ workerId: "w1", limit: 10, leaseMs: 30_000 });
      expect(claimed.map((j) => j.id)).toEqual(Array.from({ length: 10 }, (_, i) => `due-${i + 11}`));
      expect(claimed.every((j) => j.priority === 7)).toBe(true);
    } finally {
      await delayed.cleanup();
    }
  });

  it("keeps that shape in the generic plan of the prepared claim", async () => {
    // The backend prepares the claim per connection; PostgreSQL may then reuse a generic plan, made without
    // knowing the queue or the limit. Forced here, it must read the same indexes as the custom plan.
    const text = await env.database.sql.transaction(async (tx) => {
      await tx.query("SET LOCAL plan_cache_mode = force_generic_plan");
      await tx.query(`PREPARE generic_claim(text, integer, text, double precision, text, text[]) AS ${SQL.claim}`);
      try {
        const rows = await tx.query<{ "QUERY PLAN": string }>(
          `EXPLAIN EXECUTE generic_claim('${QUEUE}', 1000, 'w1', 30000, '{}', '{}')`,
        );
        return rows.map((r) => r["QUERY PLAN"]).join("\n");
      } finally {
        await tx.query("DEALLOCATE generic_claim");
      }
    });
    expect(text).toMatch(/Index Scan using jfast_jobs_claim_idx on jfast_jobs/);
    expect(text).toMatch(/Tid Scan on jfast_jobs/);
    expect(text).not.toMatch(/Seq Scan on jfast_jobs/);
    expect(text).not.toMatch(/Hash Join/);
  });

  it("claims as HOT updates: no index gets an entry", async () => {
    // A claim changes state, lease, attempts and errors, none of them read by an index (the indexes read
    // phase, which stays 'open'), and the table leaves room on each page for the new versions (fillfactor): a
    // freshly inserted page holds every row's claimed version without pruning anything first.
    const hot = await openTestBackend({ queue: QUEUE });
    try {
      await hot.backend.enqueue({ jobs: Array.from({ length: 300 }, () => new Job({ task: "bulk.ready", maxAttempts: 3 })) });
      // Each step in a transaction of its own, as the backend runs them. The counters read are the backend's
      // pending statistics (earlier transactions' too, until they are flushed), so a step counts the difference.
      const step = (sql: string, params: unknown[]) =>
        hot.database.sql.transaction(async (tx) => {
          const counters = async () => {
            const [row] = await tx.query<{ hot: string; all: string }>(
              `SELECT pg_stat_get_xact_tuples_hot_updated('jfast_jobs'::regclass) AS hot,
                      pg_stat_get_xact_tuples_updated('jfast_jobs'::regclass) AS all`,
            );
            return { hot: Number(row!.hot), all: Number(row!.all) };
          };
          const before = await counters();
          const rows = await tx.query<{ id: string; attempts: number }>(sql, params);
          const after = await counters();
          return { rows, hot: after.hot - before.hot, all: after.all - before.all };
        });
      const lost = jsonbText(workerLostError(0));
      const claim = await step(SQL.claim, [QUEUE, 300, "w1", 30_000, lost, []]);
      expect(claim.rows).toHaveLength(300);
      expect(claim).toMatchObject({ hot: 300, all: 300 });
      // A heartbeat is HOT too when its page has room again, i.e. once the versions the claim left behind were
      // pruned; that needs every transaction that could still see them to have ended, which other suites running
      // on the same server may delay. So only its effect is checked here, not where its versions went.
      const heartbeat = await step(SQL.extendLeases, [claim.rows.map((r) => r.id), "w1", 60_000]);
      expect(heartbeat.all).toBe(300);
      // The leases run out (the worker vanished): another worker's claim takes the jobs over, recording the lost attempt.
      await hot.database.sql.query("UPDATE jfast_jobs SET locked_until = now() - interval '1 second' WHERE state = 'running'");
      const reclaim = await step(SQL.claim, [QUEUE, 300, "w2", 30_000, lost, []]);
      expect(reclaim.rows).toHaveLength(300);
      expect(reclaim.rows.every((r) => r.attempts === 2)).toBe(true);
      // Through the same index and without a second one; whether each reclaimed row fits on its page depends
      // on its size with the recorded error (a rare path: only after a worker vanished).
      expect(reclaim.all).toBe(300);
    } finally {
      await hot.cleanup();
    }
  });

  it("prepares the statements a worker repeats, once per connection", async () => {
    const single = await openTestBackend({ queue: QUEUE, poolSize: 1 });
    try {
      await single.backend.enqueue({ jobs: [new Job({ task: "bulk.ready" })] });
      const [claimed] = await single.backend.claim({ workerId: "w1", limit: 10, leaseMs: 30_000 });
      await single.backend.complete({ workerId: "w1", job: claimed! });
      await single.backend.claim({ workerId: "w1", limit: 10, leaseMs: 30_000 });
      const rows = await single.database.sql.query<{ name: string }>("SELECT name FROM pg_prepared_statements ORDER BY name");
      expect(rows.map((r) => r.name)).toEqual(expect.arrayContaining(["jfast_claim", "jfast_complete"]));
    } finally {
      await single.cleanup();
    }
  });

  it("finds the next due time and lists dead letters through their indexes", async () => {
    expect(await plan(SQL.nextDue, [QUEUE, ["bulk.paused"]])).not.toMatch(/Seq Scan on jfast_jobs/);
    const listDead = await plan(SQL.listDead, [QUEUE, 20, 0]);
    expect(listDead).toMatch(/Index Scan using jfast_jobs_dead_idx/);
    expect(listDead).not.toMatch(/Sort/);
  });
});

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Actual Rows"?: number;
  "Actual Loops"?: number;
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
}

function walk(node: PlanNode, visit: (node: PlanNode) => void): void {
  visit(node);
  for (const child of node.Plans ?? []) walk(child, visit);
}

/**
 * A table with no statistics yet (a fresh service before its first ANALYZE, or a server running without
 * autovacuum): both open indexes can then look as cheap. On the scaling benchmark's table (100 000 jobs enqueued,
 * some claimed and deleted, never analyzed) the claim took jfast_jobs_open_idx and filtered priority row by row
 * through the backlog, 380 ms a claim; claim.sql now carries a condition only jfast_jobs_claim_idx can use. This
 * guards the plan on a never-analyzed backlog with deleted rows.
 */
describe("postgres: the claim's plan on a backlog never analyzed", () => {
  let env: Awaited<ReturnType<typeof openTestBackend>>;
  const QUEUE = "jfast.jobs";

  beforeAll(async () => {
    env = await openTestBackend({ queue: QUEUE });
    await env.database.sql.query(`
      INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts)
      SELECT 'ready-' || g, '${QUEUE}', 'bulk.ready', '{}', 'ready', 0, 3 FROM generate_series(1, 60000) g;
      DELETE FROM jfast_jobs WHERE id IN (SELECT 'ready-' || g FROM generate_series(1, 10000) g);
    `);
  }, 180_000);

  afterAll(async () => {
    await env?.cleanup();
  });

  it("claims through jfast_jobs_claim_idx, and the candidates and limited claims too", async () => {
    const [row] = await env.database.sql.query<{ analyzed: boolean }>(
      "SELECT coalesce(last_analyze, last_autoanalyze) IS NOT NULL AS analyzed FROM pg_stat_user_tables WHERE relid = 'jfast_jobs'::regclass",
    );
    expect(row?.analyzed).toBe(false);
    const explain = async (sql: string, params: unknown[]) =>
      (await env.database.sql.query<{ "QUERY PLAN": string }>(`EXPLAIN ${sql}`, params)).map((r) => r["QUERY PLAN"]).join("\n");
    const claim = await explain(SQL.claim, [QUEUE, 10, "w1", 30_000, jsonbText(workerLostError(0)), []]);
    expect(claim).toMatch(/Index Scan using jfast_jobs_claim_idx on jfast_jobs/);
    expect(claim).not.toMatch(/jfast_jobs_open_idx/);
    const candidates = await explain(SQL.claimCandidates, [QUEUE, 10, []]);
    expect(candidates).toMatch(/jfast_jobs_claim_idx/);
    expect(candidates).not.toMatch(/jfast_jobs_open_idx/);
    const claimed = await env.backend.claim({ workerId: "w1", limit: 10, leaseMs: 30_000 });
    expect(claimed).toHaveLength(10);
  });
});
