import { describe, expect, it } from "vitest";
import { loadMigrations } from "../../src/database/migrate.js";
import { dropSchema, openTestBackend, schemaBeforeMigration, uniqueSchema, withAdmin } from "./pg-test-env.js";

/**
 * Migration 0013 moves jfast_jobs to the layout whose claims are HOT updates (indexes on the generated `phase`
 * instead of `state`, no lease index). A service upgrading has jobs in every state in the old layout: after the
 * upgrade each of them must be where it was — claimable, running, scheduled, finished or dead.
 */
describe("postgres: upgrading a populated jfast_jobs to the layout of migration 0013", () => {
  it("keeps every job in its state: claims the ready and the expired ones, counts depths, lists dead letters", async () => {
    const schema = uniqueSchema("upgrade");
    try {
      const migrations = await loadMigrations();
      expect(migrations.find((m) => m.name === "hot_claims"), "migration 0013_hot_claims.sql").toBeDefined();
      // The schema as a service left it before this release: every earlier migration applied and recorded.
      await schemaBeforeMigration(schema, "hot_claims", async (c) => {
        await c.query(`
          INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, available_at, locked_by, locked_until, finished_at, died_at, errors) VALUES
            ('ready', 'up.q', 'up.a', '{}', 'ready', 0, 3, now() - interval '1 minute', NULL, NULL, NULL, NULL, '[]'),
            ('later', 'up.q', 'up.a', '{}', 'ready', 0, 3, now() + interval '1 hour', NULL, NULL, NULL, NULL, '[]'),
            ('running', 'up.q', 'up.a', '{}', 'running', 1, 3, now() - interval '2 minutes', 'w-alive', now() + interval '1 hour', NULL, NULL, '[]'),
            ('expired', 'up.q', 'up.a', '{}', 'running', 1, 3, now() - interval '3 minutes', 'w-gone', now() - interval '1 second', NULL, NULL, '[]'),
            ('done', 'up.q', 'up.a', '{}', 'completed', 1, 3, now() - interval '5 minutes', NULL, NULL, now(), NULL, '[]'),
            ('dead', 'up.q', 'up.a', '{"k": 1}', 'dead', 3, 3, now() - interval '10 minutes', NULL, NULL, NULL, now(),
             '[{"attempt": 3, "at": "2026-11-30T00:00:00.000Z", "class": "Error", "message": "boom"}]')`);
      });

      // The service starts on a release with 0013: it and the migrations after it are applied.
      const env = await openTestBackend({ schema, queue: "up.q" });
      try {
        const applied = await withAdmin(async (c) => (await c.query(`SELECT max(version)::int AS v, count(*)::int AS n FROM "${schema}".jfast_migrations`)).rows[0]);
        const latest = migrations.at(-1)!.version;
        expect(applied).toEqual({ v: latest, n: latest });
        const phases = await withAdmin(async (c) => (await c.query(`SELECT id, phase FROM "${schema}".jfast_jobs ORDER BY id`)).rows);
        expect(phases).toEqual([
          { id: "dead", phase: "dead" },
          { id: "done", phase: "completed" },
          { id: "expired", phase: "open" },
          { id: "later", phase: "open" },
          { id: "ready", phase: "open" },
          { id: "running", phase: "open" },
        ]);
        expect(await env.backend.depths()).toEqual({ ready: 1, scheduled: 1, running: 2, dead: 1 });

        // One claim takes the ready job and the one whose lease expired (its lost attempt recorded); the live
        // lease, the scheduled job and the finished rows stay where they are.
        const claimed = await env.backend.claim({ workerId: "w-new", limit: 10, leaseMs: 30_000 });
        expect(claimed.map((j) => j.id).sort()).toEqual(["expired", "ready"]);
        const expired = claimed.find((j) => j.id === "expired")!;
        expect(expired.attempts).toBe(2);
        expect(expired.errors.map((e) => e.reason)).toEqual(["worker lost"]);
        expect(await env.backend.depths()).toEqual({ ready: 0, scheduled: 1, running: 3, dead: 1 });

        const dead = await env.backend.listDead({ limit: 10 });
        expect(dead.map((d) => [d.job.id, d.lastError?.message])).toEqual([["dead", "boom"]]);
        expect((await env.backend.retryDead({ ids: ["dead"] })).retried).toEqual(["dead"]);
        expect(await env.backend.depths()).toEqual({ ready: 1, scheduled: 1, running: 3, dead: 0 });
      } finally {
        await env.cleanup();
      }
    } finally {
      await dropSchema(schema);
    }
  });
});
