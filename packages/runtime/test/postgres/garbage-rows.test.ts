import { afterEach, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import { adminCall, QUEUE_TUNING, startFuzzApp, type FuzzApp } from "../fuzz/fuzz-app.js";
import { reportFigures } from "../fuzz/fuzz-settings.js";
import { PG_URL, dropSchema, eventually, uniqueSchema, withAdmin } from "./pg-test-env.js";

/**
 * Rows in jfast_jobs that the runtime never writes, as a hand-written INSERT, another tool or an older version
 * could leave them: every column wrong where the table's constraints let it be. Each must end in a documented
 * state (run, or dead with its reason) without stopping the queue, and the admin views must show it.
 */
interface GarbageRow {
  name: string;
  /** Column values as SQL expressions; the rest are the table's defaults. */
  columns: Record<string, string>;
  /** What becomes of it: it runs (its handler returns), or it is dead with this reason. */
  end: "completed" | { dead: string | RegExp };
}

const ROWS: GarbageRow[] = [
  { name: "errors is an object, not an array", columns: { errors: `'{"not":"an array"}'` }, end: "completed" },
  { name: "errors is a string", columns: { errors: `'"boom"'` }, end: "completed" },
  { name: "errors holds numbers and nulls", columns: { errors: `'[1, null, "x", {"attempt":"one"}]'` }, end: "completed" },
  { name: "trace is a string", columns: { trace: `'"00-abc"'` }, end: "completed" },
  { name: "trace is an array", columns: { trace: `'[1,2]'` }, end: "completed" },
  { name: "traceparent is a number", columns: { trace: `'{"traceparent": 5}'` }, end: "completed" },
  { name: "traceparent is garbage text", columns: { trace: `'{"traceparent": "zz-not-a-trace", "tracestate": 7}'` }, end: "completed" },
  { name: "negative attempts", columns: { attempts: "-5" }, end: "completed" },
  { name: "null max_attempts", columns: { max_attempts: "NULL" }, end: "completed" },
  { name: "zero max_attempts", columns: { max_attempts: "0" }, end: "completed" },
  { name: "negative max_attempts", columns: { max_attempts: "-3" }, end: "completed" },
  { name: "attempts past max_attempts", columns: { attempts: "40", max_attempts: "3" }, end: "completed" },
  { name: "negative timeout_ms", columns: { timeout_ms: "-1" }, end: "completed" },
  { name: "zero timeout_ms", columns: { timeout_ms: "0" }, end: "completed" },
  { name: "absurd timeout_ms", columns: { timeout_ms: "9223372036854775807" }, end: "completed" },
  { name: "a task nobody knows", columns: { task: `'nobody.knows'` }, end: { dead: "unknown task" } },
  { name: "an empty task name", columns: { task: `''` }, end: { dead: "unknown task" } },
  { name: "a 100 000-character task name", columns: { task: `repeat('x', 100000)` }, end: { dead: "unknown task" } },
  { name: "payload with a NUL (json keeps it, jsonb cannot)", columns: { payload: String.raw`'{"note":"a\u0000b"}'` }, end: "completed" },
  { name: "payload with a lone surrogate", columns: { payload: String.raw`'["\udc00"]'` }, end: "completed" },
  { name: "payload number past a double", columns: { payload: `'{"n": 1e400}'` }, end: "completed" },
  { name: "payload with a duplicate key", columns: { payload: `'{"k": 1, "k": 2}'` }, end: "completed" },
  { name: "payload null", columns: { payload: `'null'` }, end: "completed" },
  { name: "payload a bare string", columns: { payload: `'"text"'` }, end: "completed" },
  { name: "available_at -infinity", columns: { available_at: `'-infinity'` }, end: "completed" },
  { name: "created_at -infinity", columns: { created_at: `'-infinity'` }, end: "completed" },
  { name: "created_at infinity", columns: { created_at: `'infinity'` }, end: "completed" },
  { name: "available_at before the epoch", columns: { available_at: `'1900-01-01'` }, end: "completed" },
  { name: "a 1 MB tenant id", columns: { tenant_id: `repeat('t', 1000000)` }, end: "completed" },
  { name: "running, its lease gone long ago", columns: { state: `'running'`, locked_by: `'ghost'`, locked_until: `now() - interval '1 day'`, attempts: "1", max_attempts: "3" }, end: "completed" },
  // No lease is a lease that has run out: the attempt is lost, and with no max_attempts it was the only one.
  { name: "running with no lease at all", columns: { state: `'running'`, locked_by: `'ghost'`, locked_until: "NULL", attempts: "1" }, end: { dead: "worker lost" } },
  { name: "running with no lease and no worker", columns: { state: `'running'`, attempts: "0", max_attempts: "2" }, end: "completed" },
];

describe("postgres: garbage rows in jfast_jobs", () => {
  let app: FuzzApp | null = null;
  afterEach(async () => {
    await app?.close();
    app = null;
  });

  it("every row ends run or dead with its reason, the admin views show it, and the queue keeps draining", { timeout: 120_000 }, async () => {
    const schema = uniqueSchema("garbage");
    app = await startFuzzApp(async () => ({
      plugins: ["database", "queue"],
      sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}`,
      cleanup: () => dropSchema(schema),
    }));
    const fuzz = app;
    const before = new Job({ task: "fuzz.ok", payload: { before: true } });
    await fuzz.queue.enqueue(before);
    await withAdmin(async (c) => {
      for (const [i, row] of ROWS.entries()) {
        const columns = { id: `'garbage-${i}'`, queue: `'jfast.jobs'`, task: `'fuzz.ok'`, payload: `'{}'`, ...row.columns };
        await c.query(`INSERT INTO "${schema}".jfast_jobs (${Object.keys(columns).join(", ")}) VALUES (${Object.values(columns).join(", ")})`);
      }
    });
    const canary = new Job({ task: "fuzz.canary" });
    await fuzz.queue.enqueue(canary);
    await eventually("the canary enqueued after the garbage to run", async () => fuzz.runs.canaries.has(canary.id), 30_000);

    const states = await eventually(
      "every garbage row to end",
      async () => {
        const rows = await withAdmin(async (c) => (await c.query(`SELECT id, state, errors FROM "${schema}".jfast_jobs WHERE id LIKE 'garbage-%'`)).rows);
        return rows.length === ROWS.length && rows.every((r) => r.state === "completed" || r.state === "dead") ? rows : null;
      },
      30_000,
    ).catch(async (error: Error) => {
      const rows = await withAdmin(async (c) => (await c.query(`SELECT id, state, attempts, locked_until FROM "${schema}".jfast_jobs WHERE id LIKE 'garbage-%' AND state NOT IN ('completed', 'dead')`)).rows);
      throw new Error(`${error.message}: ${rows.map((r) => `${ROWS[Number(String(r.id).slice(8))]!.name} (${r.state})`).join("; ")}`);
    });
    const byId = new Map(states.map((r) => [r.id as string, r as { state: string; errors: Array<{ reason?: string }> }]));
    for (const [i, row] of ROWS.entries()) {
      const got = byId.get(`garbage-${i}`)!;
      if (row.end === "completed") expect(got.state, row.name).toBe("completed");
      else {
        expect(got.state, row.name).toBe("dead");
        expect(got.errors.at(-1)?.reason, row.name).toMatch(row.end.dead);
      }
      const detail = await adminCall(fuzz.jfast, "jobs.get", { input: { id: `garbage-${i}` } });
      expect(detail.status, `${row.name}: ${JSON.stringify(detail.error)}`).toBe(200);
      expect(detail.data.job.state).toBe(got.state);
    }
    const list = await adminCall(fuzz.jfast, "deadLetters.list", { input: { limit: 200 } });
    expect(list.status, JSON.stringify(list.error)).toBe(200);
    const groups = await adminCall(fuzz.jfast, "deadLetters.groups");
    expect(groups.status, JSON.stringify(groups.error)).toBe(200);
    expect(fuzz.runs.payloads.has(before.id)).toBe(true);
    const dead = states.filter((r) => r.state === "dead").length;
    reportFigures({ kind: "garbage", suite: "postgres rows", inputs: ROWS.length, completed: ROWS.length - dead, quarantined: dead, lost: 0 });
  });
});
