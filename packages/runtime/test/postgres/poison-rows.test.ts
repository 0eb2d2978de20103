import { afterEach, describe, expect, it } from "vitest";
import { defineTask } from "../../src/core/define-task.js";
import type { Worker } from "../../src/worker/worker.js";
import { makeJob, startTestWorker } from "../conformance/harness.js";
import { eventually, openTestBackend, withAdmin } from "./pg-test-env.js";

/**
 * Rows the queue's statements cannot process must never stop the queue. A payload that PostgreSQL keeps as json
 * but cannot read as jsonb (a string with \u0000, half a surrogate pair) once made the death of its job fail (the
 * dead-payload index casts to jsonb), and then every claim that reached the row with its lease expired. Such rows
 * are written here as they were before enqueue refused them: by SQL, past the runtime.
 */
describe("postgres: rows a statement cannot process", () => {
  let env: Awaited<ReturnType<typeof openTestBackend>> | null = null;
  let worker: Worker | null = null;
  afterEach(async () => {
    await worker?.stop({ graceMs: 0 });
    worker = null;
    await env?.cleanup();
    env = null;
  });

  /** A job row with a raw JSON payload text, as a hand-written INSERT (or an older version) would leave it. */
  async function insertRaw(schema: string, row: { id: string; task: string; payloadText: string; state?: string; attempts?: number; maxAttempts?: number; leaseExpired?: boolean }) {
    await withAdmin((c) =>
      c.query(
        `INSERT INTO "${schema}".jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, locked_by, locked_until)
         VALUES ($1, 'jfast.jobs', $2, $3::json, $4, $5, $6, $7, $8)`,
        [
          row.id,
          row.task,
          row.payloadText,
          row.state ?? "ready",
          row.attempts ?? 0,
          row.maxAttempts ?? 3,
          row.leaseExpired ? "a-vanished-worker" : null,
          row.leaseExpired ? new Date(Date.now() - 60_000) : null,
        ],
      ),
    );
  }

  async function stateOf(schema: string, id: string): Promise<{ state: string; errors: Array<{ message: string; reason?: string }> }> {
    return withAdmin(async (c) => (await c.query(`SELECT state, errors FROM "${schema}".jfast_jobs WHERE id = $1`, [id])).rows[0]);
  }

  it.each([
    ["a NUL character", String.raw`{"note":"a\u0000b"}`],
    ["a lone surrogate", String.raw`{"note":"\ud800"}`],
  ])("a job whose payload holds %s dies with its error, and the jobs behind it run", async (_name, payloadText) => {
    env = await openTestBackend();
    const { schema, backend } = env;
    // Running on its last attempt with the lease expired: the next claim must move it to dead letters.
    await insertRaw(schema, { id: "lost-on-last", task: "poison.noop", payloadText, state: "running", attempts: 3, maxAttempts: 3, leaseExpired: true });
    // Ready, with a handler that fails for good on its only attempt: the worker's kill must record it.
    await insertRaw(schema, { id: "fails-once", task: "poison.fail", payloadText, maxAttempts: 1 });
    const ran: string[] = [];
    const noop = defineTask("poison.noop", async (payload: { n?: number }) => {
      ran.push(String(payload.n));
    });
    const fail = defineTask("poison.fail", async () => {
      throw new Error("refused: \u0000 in the message too, and half a pair \udc00");
    });
    await backend.enqueue({ jobs: Array.from({ length: 20 }, (_, n) => makeJob({ task: "poison.noop", payload: { n } })) });
    worker = startTestWorker({ backend, tasks: [noop, fail], concurrency: 4, pollIntervalMs: 100 });

    await eventually("every good job ran", async () => ran.length === 20);
    const lost = await eventually("the expired job is dead", async () => {
      const row = await stateOf(schema, "lost-on-last");
      return row.state === "dead" ? row : null;
    });
    expect(lost.errors.at(-1)?.reason).toBe("worker lost");
    const failed = await eventually("the failing job is dead", async () => {
      const row = await stateOf(schema, "fails-once");
      return row.state === "dead" ? row : null;
    });
    expect(failed.errors.at(-1)?.message).toBe("refused: \ufffd in the message too, and half a pair \ufffd");

    // An operator can read, search around and remove them.
    const dead = await backend.listDead({ limit: 10 });
    expect(dead.map((d) => d.job.id).sort()).toEqual(["fails-once", "lost-on-last"]);
    const search = await backend.searchDead({ payload: { path: ["note"], equals: "a" }, limit: 10 });
    expect(search.rows).toEqual([]);
    expect(await backend.discardDead({ ids: ["fails-once", "lost-on-last"] })).toEqual({ discarded: ["fails-once", "lost-on-last"], missing: [] });
  });

  it("a row the claim statement fails on is quarantined with the reason, and the claims go on", async () => {
    env = await openTestBackend();
    const { schema, backend } = env;
    // A rule of the service's own, in a trigger, that refuses one job's claim with a data error: the claim
    // statement fails as a whole whenever it reaches that row.
    await withAdmin(async (c) => {
      await c.query(`CREATE FUNCTION "${schema}".refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.task = 'poison.refused' AND NEW.state = 'running' THEN
            RAISE EXCEPTION 'this row cannot run' USING ERRCODE = '22023';
          END IF;
          RETURN NEW;
        END $$`);
      await c.query(`CREATE TRIGGER refuse_poison BEFORE UPDATE ON "${schema}".jfast_jobs FOR EACH ROW EXECUTE FUNCTION "${schema}".refuse_poison()`);
    });
    const ran: number[] = [];
    const noop = defineTask("poison.noop", async (payload: { n: number }) => {
      ran.push(payload.n);
    });
    const refused = defineTask("poison.refused", async () => undefined);
    const bad = makeJob({ task: "poison.refused", payload: {} });
    await backend.enqueue({ jobs: [makeJob({ task: "poison.noop", payload: { n: 0 } }), bad] });
    await backend.enqueue({ jobs: Array.from({ length: 30 }, (_, i) => makeJob({ task: "poison.noop", payload: { n: i + 1 } })) });
    worker = startTestWorker({ backend, tasks: [noop, refused], concurrency: 5, pollIntervalMs: 100 });

    await eventually("every other job ran", async () => ran.length === 31);
    const row = await stateOf(schema, bad.id);
    expect(row.state).toBe("dead");
    expect(row.errors.at(-1)).toMatchObject({ reason: "quarantined" });
    expect(row.errors.at(-1)?.message).toMatch(/a claim could not process this job's row, so it was set aside: this row cannot run/);
    const info = await backend.getJob({ id: bad.id });
    expect(info?.state).toBe("dead");
  });
});
