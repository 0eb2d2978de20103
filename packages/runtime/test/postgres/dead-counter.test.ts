import { afterEach, describe, expect, it } from "vitest";
import { errorToAttempt } from "../../src/core/job.js";
import { makeJob } from "../conformance/harness.js";
import { openTestBackend, sleep, withAdmin } from "./pg-test-env.js";

/**
 * depths().dead is read from a counter kept by statement triggers, not counted. Every path into and out of
 * dead letters must keep it equal to the real count, including bulk statements and the claim's own
 * "worker lost" deaths (a second UPDATE of jfast_jobs inside the claim statement).
 */
describe("postgres: the dead-letter counter", () => {
  let env: Awaited<ReturnType<typeof openTestBackend>> | null = null;
  afterEach(async () => {
    await env?.cleanup();
    env = null;
  });

  async function realDead(): Promise<number> {
    const [row] = await env!.database.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM jfast_jobs WHERE state = 'dead'");
    return row!.n;
  }

  it("matches the real count through kill, worker-lost deaths, retry, discard and truncate", async () => {
    env = await openTestBackend();
    const { backend, database } = env;
    const expectDead = async (n: number) => {
      expect(await realDead()).toBe(n);
      expect((await backend.depths()).dead).toBe(n);
    };

    // 30 killed by their worker, in one go.
    await backend.enqueue({ jobs: Array.from({ length: 30 }, () => makeJob()) });
    const claimed = await backend.claim({ workerId: "w", limit: 30, leaseMs: 60_000 });
    await Promise.all(claimed.map((job) => backend.kill({ workerId: "w", job, error: errorToAttempt(new Error("boom"), 1) })));
    await expectDead(30);

    // 5 whose worker vanished on their last attempt: the claim statement itself moves them to dead.
    await backend.enqueue({ jobs: Array.from({ length: 5 }, () => makeJob({ maxAttempts: 1 })) });
    await backend.claim({ workerId: "vanished", limit: 5, leaseMs: 100 });
    await sleep(250);
    expect(await backend.claim({ workerId: "w", limit: 5, leaseMs: 60_000 })).toEqual([]);
    await expectDead(35);

    // Some retried, some discarded, then all retried in one statement.
    const dead = await backend.listDead({ limit: 100 });
    await backend.retryDead({ ids: dead.slice(0, 10).map((d) => d.job.id) });
    await expectDead(25);
    await backend.discardDead({ ids: dead.slice(10, 15).map((d) => d.job.id) });
    await expectDead(20);
    await backend.retryDead({ all: true });
    await expectDead(0);

    // A bulk death in one statement (an operator's SQL) counts too; TRUNCATE resets.
    // (35 jobs minus the 5 discarded are left.)
    await database.sql.query("UPDATE jfast_jobs SET state = 'dead', died_at = now(), locked_by = NULL, locked_until = NULL");
    await expectDead(30);
    await database.sql.query("TRUNCATE jfast_jobs");
    await expectDead(0);
  });

  it("counts dead rows written by a session whose search_path is elsewhere, and statements that mix dead and live rows", async () => {
    env = await openTestBackend();
    const { backend, schema } = env;
    const table = `"${schema}".jfast_jobs`;
    // The trigger names its counter tables with the schema: another session's search_path does not matter.
    await withAdmin(async (client) => {
      await client.query("SET search_path TO public");
      await client.query(
        `INSERT INTO ${table} (id, queue, task, payload, state, attempts, max_attempts, died_at)
         SELECT 'imported-' || g, 'jfast.jobs', CASE WHEN g % 2 = 0 THEN 'a.even' ELSE 'a.odd' END, '{}', CASE WHEN g <= 6 THEN 'dead' ELSE 'ready' END, 1, 1,
                CASE WHEN g <= 6 THEN now() END
         FROM generate_series(1, 10) g`,
      );
    });
    expect(await realDead()).toBe(6);
    expect((await backend.depths()).dead).toBe(6);
    expect((await backend.depthsByTask()).tasks).toMatchObject({ "a.even": { dead: 3 }, "a.odd": { dead: 3 } });
    await withAdmin(async (client) => {
      await client.query("SET search_path TO public");
      // One statement moves two live rows into dead and one dead row out; another deletes a dead and a live row.
      await client.query(
        `UPDATE ${table} SET state = CASE WHEN state = 'dead' THEN 'ready' ELSE 'dead' END,
                died_at = CASE WHEN state = 'dead' THEN NULL ELSE now() END
         WHERE id IN ('imported-1', 'imported-7', 'imported-8')`,
      );
      await client.query(`DELETE FROM ${table} WHERE id IN ('imported-2', 'imported-9')`);
    });
    expect(await realDead()).toBe(6);
    expect((await backend.depths()).dead).toBe(6);
    expect((await backend.depthsByTask()).tasks).toMatchObject({ "a.even": { dead: 3 }, "a.odd": { dead: 3 } });
  });
});
