import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SQL } from "../../src/backends/postgres/load-sql.js";
import { jsonbText } from "../../src/backends/postgres/job-rows.js";
import type { TaskLimits } from "../../src/core/limits.js";
import { workerLostError } from "../../src/core/queue-backend.js";
import { makeJob } from "../conformance/harness.js";
import { openTestBackend } from "./pg-test-env.js";

const QUEUE = "jfast.jobs";
const FAIR = "plan.fair";
const KEYS = 1000;
/** The most pages a placement may read and write per job (see the placement case). */
const PAGES_PER_JOB = 60;

/**
 * The fair claim (claim-fair.sql), the placement of jobs at their turns (fair-place.sql) and the pruner's drop of
 * emptied keys (fair-keys-drop.sql) on tables whose statistics are stale, as they are between a burst of enqueues
 * and the next ANALYZE (or always, where autovacuum is off): the claim reads one index range, a placement and a
 * drop a few index lookups per job or key, never a walk of every key of the task or of every open job of the queue.
 * Measured in buffers (EXPLAIN ANALYZE), which do not depend on the machine's speed.
 */
describe("postgres: the fair claim's plan on stale statistics", () => {
  let env: Awaited<ReturnType<typeof openTestBackend>>;

  beforeAll(async () => {
    env = await openTestBackend({ queue: QUEUE });
    await env.backend.setLimits({ limits: new Map<string, TaskLimits>([[FAIR, { concurrency: null, rateLimit: null, fair: { weights: {} } }]]) });
    // 3 jobs for each of 1 000 keys; no ANALYZE, so the planner still believes the tables empty.
    const jobs = Array.from({ length: 3 * KEYS }, (_, i) => {
      const job = makeJob({ task: FAIR, payload: { i }, tenantId: `t${i % KEYS}` });
      job.limitKey = `t${i % KEYS}`;
      return job;
    });
    for (let i = 0; i < jobs.length; i += 1000) await env.backend.enqueue({ jobs: jobs.slice(i, i + 1000) });
    // The first keys served once: their turns move on, as after a worker's first claims.
    expect(await env.backend.claim({ workerId: "w0", limit: 50, leaseMs: 60_000 })).toHaveLength(50);
  }, 120_000);

  afterAll(async () => {
    await env?.cleanup();
  });

  /**
   * EXPLAIN ANALYZE of `sql`, prepared as the backend prepares it and run with the generic plan PostgreSQL may settle
   * on for it (made without the parameters' values), in a transaction rolled back afterwards: nothing changes.
   */
  async function explainRun(sql: string, types: string, params: string): Promise<string> {
    let text = "";
    await env.database.sql
      .transaction(async (tx) => {
        await tx.query("SET LOCAL plan_cache_mode = force_generic_plan");
        await tx.query(`PREPARE planned(${types}) AS ${sql}`);
        try {
          const rows = await tx.query<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS, TIMING OFF) EXECUTE planned(${params})`);
          text = rows.map((r) => r["QUERY PLAN"]).join("\n");
        } finally {
          // A prepared statement outlives the transaction: the next one prepares its own under the same name.
          await tx.query("DEALLOCATE planned");
        }
        throw new Error("rolled back");
      })
      .catch((error: unknown) => {
        if ((error as Error).message !== "rolled back") throw error;
      });
    return text;
  }

  /** The buffers read per loop by the index scan on `relation` found in the plan's section `section`. */
  function buffersPerLoop(plan: string, section: RegExp, relation: string): number {
    const lines = plan.split("\n");
    const start = lines.findIndex((l) => section.test(l));
    expect(start, `${section} in the plan`).toBeGreaterThanOrEqual(0);
    const at = lines.findIndex((l, i) => i > start && new RegExp(`Index (Only )?Scan using \\w+ on ${relation}\\b`).test(l));
    expect(at, `an index scan on ${relation} after ${section}`).toBeGreaterThan(start);
    const loops = Number(/loops=(\d+)/.exec(lines[at]!)![1]);
    const hit = lines.slice(at + 1, at + 6).map((l) => /Buffers: shared hit=(\d+)/.exec(l)).find(Boolean);
    return Number(hit![1]) / loops;
  }

  /** The shared buffers the whole statement read and wrote (the plan's first Buffers line). */
  function totalBuffers(plan: string): number {
    const line = plan.split("\n").find((l) => /Buffers: shared/.test(l))!;
    return Number(/hit=(\d+)/.exec(line)?.[1] ?? 0) + Number(/read=(\d+)/.exec(line)?.[1] ?? 0);
  }

  it("claims the lowest turns from one index range, reading a few pages per job, no key read or written", async () => {
    const lost = jsonbText(workerLostError(0)).replaceAll("'", "''");
    const plan = await explainRun(SQL.claimFair, "text, integer, text, double precision, text, text[]", `'${QUEUE}', 50, 'w1', 60000, '${lost}', ARRAY['${FAIR}']`);
    expect(plan).toMatch(/Update on jfast_jobs/);
    expect(plan).toMatch(/Index Scan using jfast_jobs_fair_idx on jfast_jobs/);
    expect(plan).not.toMatch(/jfast_fair_keys/);
    expect(plan).not.toMatch(/Seq Scan on jfast_jobs/);
    // About what the plain claim reads for the same 50 jobs (the fair one read keys and their jobs: about 1 200
    // pages for 30 jobs).
    const plain = await explainRun(SQL.claim, "text, integer, text, double precision, text, text[]", `'${QUEUE}', 50, 'w1', 60000, '${lost}', '{}'`);
    expect(plain).toMatch(/Update on jfast_jobs/);
    expect(totalBuffers(plan)).toBeLessThanOrEqual(totalBuffers(plain) * 1.25);
  });

  it("places an enqueue's jobs by their ids and a claim's waiting jobs from the fair index, never reading the queue's jobs", async () => {
    const rows = await env.database.sql.query<{ id: string; limit_key: string }>(
      "SELECT id, limit_key FROM jfast_jobs WHERE queue = $1 AND task = $2 AND state = 'ready' ORDER BY seq LIMIT 20",
      [QUEUE, FAIR],
    );
    const ids = rows.map((r) => r.id);
    const list = (values: string[]) => `ARRAY[${values.map((v) => `'${v}'`).join(", ")}]`;
    const types = "text, text[], integer, text[], text[]";
    try {
      // Those jobs as they are just after their insert: no key yet.
      await env.database.sql.query("UPDATE jfast_jobs SET limit_key = NULL, fair_turn = NULL WHERE id = ANY($1::text[])", [ids]);
      const byIds = await explainRun(SQL.fairPlace, types, `'${QUEUE}', ARRAY['${FAIR}'], 20, ${list(ids)}, ${list(rows.map((r) => r.limit_key))}`);
      expect(byIds).toMatch(/Update on jfast_jobs/);
      expect(byIds).not.toMatch(/Seq Scan on jfast_(jobs|fair_keys)/);
      // About 35 pages a job: its lookup, its key locked and written (two indexes), its key and turn written. More
      // (44 seen) when other sessions of the server hold back the pruning of the rows this file's rolled-back
      // statements left dead; a plan that walks the task's keys or the queue's jobs for each job reads thousands.
      expect(totalBuffers(byIds)).toBeLessThanOrEqual(20 * PAGES_PER_JOB);
      // Waiting for their turn, as jobs come due are.
      await env.database.sql.query("UPDATE jfast_jobs AS j SET limit_key = r.k, fair_turn = 'Infinity' FROM unnest($1::text[], $2::text[]) AS r(id, k) WHERE j.id = r.id", [
        ids,
        rows.map((r) => r.limit_key),
      ]);
      const waiting = await explainRun(SQL.fairPlace, types, `'${QUEUE}', ARRAY['${FAIR}'], 100, NULL, NULL`);
      expect(waiting).toMatch(/Index Scan using jfast_jobs_fair_idx on jfast_jobs/);
      expect(waiting).not.toMatch(/Seq Scan on jfast_(jobs|fair_keys)/);
      expect(totalBuffers(waiting)).toBeLessThanOrEqual(20 * PAGES_PER_JOB);
    } finally {
      await env.database.sql.query("UPDATE jfast_jobs AS j SET limit_key = r.k, fair_turn = 0 FROM unnest($1::text[], $2::text[]) AS r(id, k) WHERE j.id = r.id", [
        ids,
        rows.map((r) => r.limit_key),
      ]);
    }
  });

  it("drops emptied keys after one index probe each for an open job", async () => {
    const keys = Array.from({ length: 60 }, (_, i) => `t${i}`);
    const plan = await explainRun(SQL.fairKeysDrop, "text, text[], text[]", `'${QUEUE}', ARRAY[${keys.map(() => `'${FAIR}'`).join(", ")}], ARRAY[${keys.map((k) => `'${k}'`).join(", ")}]`);
    expect(plan).not.toMatch(/Anti Join/);
    expect(buffersPerLoop(plan, /Delete on jfast_fair_keys/, "jfast_jobs")).toBeLessThanOrEqual(8);
  });
});
