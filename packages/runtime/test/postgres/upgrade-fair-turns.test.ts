import { describe, expect, it } from "vitest";
import type { TaskLimits } from "../../src/core/limits.js";
import { dropSchema, openTestBackend, schemaBeforeMigration, uniqueSchema, withAdmin } from "./pg-test-env.js";

const QUEUE = "up.fair";
const TASK = "up.fair_task";
const FAIR = new Map<string, TaskLimits>([[TASK, { concurrency: null, rateLimit: null, fair: { weights: {} } }]]);

/**
 * Migration 0040 fixes each fair job's turn when it comes due (docs/flow-control.md#fair-share-across-keys). A
 * service upgrading has fair jobs stored without a turn, and during a rolling upgrade a process of the earlier
 * version may store more: after the upgrade, and after a restart of this version, every one of them is claimed,
 * the keys taking turns.
 */
describe("postgres: upgrading fair jobs stored before migration 0040", () => {
  it("claims the fair jobs stored before it, keys in turn, and those an earlier process stores after it once a process restarts", async () => {
    const schema = uniqueSchema("upfair");
    try {
      await schemaBeforeMigration(schema, "fair_turns", async (c) => {
        // As the earlier version left them: the task fair, its keys in turn order, four jobs of A then one of B.
        await c.query("INSERT INTO jfast_task_limits (queue, task, fair) VALUES ($1, $2, true)", [QUEUE, TASK]);
        await c.query("INSERT INTO jfast_fair_keys (queue, task, limit_key, turn) VALUES ($1, $2, 'a', 0), ($1, $2, 'b', 0)", [QUEUE, TASK]);
        for (const [id, key, ago] of [["a1", "a", 50], ["a2", "a", 40], ["a3", "a", 30], ["a4", "a", 20], ["b1", "b", 10]] as const) {
          await c.query(
            `INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, available_at, errors, limit_key)
             VALUES ($1, $2, $3, '{}', 'ready', 0, 3, now() - $4 * interval '1 second', '[]', $5)`,
            [id, QUEUE, TASK, ago, key],
          );
        }
      });

      const env = await openTestBackend({ schema, queue: QUEUE });
      try {
        await env.backend.setLimits({ limits: FAIR });
        // Placed by the first claim in the order they came due: A's first, then B's ahead of A's second.
        const first = await env.backend.claim({ workerId: "w", limit: 2, leaseMs: 30_000 });
        expect(first.map((j) => j.id)).toEqual(["a1", "b1"]);
        const rest = await env.backend.claim({ workerId: "w", limit: 10, leaseMs: 30_000 });
        expect(rest.map((j) => j.id)).toEqual(["a2", "a3", "a4"]);

        // A process of the earlier version stores a job without a turn; this version places it when it starts again.
        await withAdmin((c) =>
          c.query(
            `INSERT INTO "${schema}".jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, available_at, errors, limit_key)
             VALUES ('c1', $1, $2, '{}', 'ready', 0, 3, now(), '[]', 'c')`,
            [QUEUE, TASK],
          ),
        );
        expect(await env.backend.claim({ workerId: "w", limit: 10, leaseMs: 30_000 })).toEqual([]);
        await env.backend.setLimits({ limits: FAIR });
        expect((await env.backend.claim({ workerId: "w", limit: 10, leaseMs: 30_000 })).map((j) => j.id)).toEqual(["c1"]);
      } finally {
        await env.cleanup();
      }
    } finally {
      await dropSchema(schema);
    }
  }, 60_000);
});
