import { describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import type { EnqueueResult } from "../../src/core/queue-backend.js";
import { openTestBackend, sleep } from "./pg-test-env.js";

/**
 * outbox.enqueue on the PostgreSQL queue writes the job in the caller's transaction (enqueueWithin): its unique
 * key is taken there, and a concurrent transaction's job of the same key waits for that one to end.
 */
describe("PostgreSQL: unique jobs inside the caller's transaction", () => {
  it("a second transaction's job of the key waits for the first, then is its duplicate; after a rollback it is added", async () => {
    const { backend, database, cleanup } = await openTestBackend({ poolSize: 4 });
    try {
      const job = (key: string) => new Job({ task: "tx.unique", unique: { key } });
      const first = job("k");
      let releaseFirst!: () => void;
      const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
      let firstWritten!: () => void;
      const written = new Promise<void>((resolve) => (firstWritten = resolve));
      const firstTx = database.sql.transaction(async (tx) => {
        await backend.enqueueWithin({ executor: tx, jobs: [first] });
        firstWritten();
        await firstHeld;
      });
      await written;
      const second = job("k");
      let secondDone = false;
      const secondTx = database.sql
        .transaction((tx) => backend.enqueueWithin({ executor: tx, jobs: [second] }))
        .finally(() => (secondDone = true));
      await sleep(300);
      // Its insert waits on the first transaction's uncommitted row of the same key.
      expect(secondDone).toBe(false);
      releaseFirst();
      await firstTx;
      const result: EnqueueResult = await secondTx;
      expect(result.inserted).toEqual([]);
      expect(result.duplicates?.get(second.id)).toBe(first.id);

      // A rolled-back transaction holds nothing.
      const rolledBack = job("r");
      await expect(
        database.sql.transaction(async (tx) => {
          await backend.enqueueWithin({ executor: tx, jobs: [rolledBack] });
          throw new Error("rollback");
        }),
      ).rejects.toThrow("rollback");
      const after = job("r");
      expect((await backend.enqueue({ jobs: [after] })).inserted).toEqual([after.id]);

      // A key held for a period too.
      const periodic = new Job({ task: "tx.unique", unique: { key: "p", periodMs: 60_000 } });
      await database.sql.transaction((tx) => backend.enqueueWithin({ executor: tx, jobs: [periodic] }));
      const again = new Job({ task: "tx.unique", unique: { key: "p", periodMs: 60_000 } });
      const answer = await database.sql.transaction((tx) => backend.enqueueWithin({ executor: tx, jobs: [again] }));
      expect(answer.duplicates?.get(again.id)).toBe(periodic.id);
    } finally {
      await cleanup();
    }
  }, 60_000);

  it("a retried dead letter does not take back a key another job holds", async () => {
    const { backend, cleanup } = await openTestBackend();
    try {
      const dead = new Job({ task: "tx.unique", maxAttempts: 1, unique: { key: "d" } });
      await backend.enqueue({ jobs: [dead] });
      const [claimed] = await backend.claim({ workerId: "w", limit: 1, leaseMs: 10_000 });
      await backend.kill({ workerId: "w", job: claimed!, error: { attempt: 1, at: new Date().toISOString(), class: "Error", message: "x" } });
      const holder = new Job({ task: "tx.unique", unique: { key: "d" } });
      expect((await backend.enqueue({ jobs: [holder] })).inserted).toEqual([holder.id]);
      expect((await backend.retryDead({ ids: [dead.id] })).retried).toEqual([dead.id]);
      const third = new Job({ task: "tx.unique", unique: { key: "d" } });
      expect((await backend.enqueue({ jobs: [third] })).duplicates?.get(third.id)).toBe(holder.id);
    } finally {
      await cleanup();
    }
  }, 60_000);
});
