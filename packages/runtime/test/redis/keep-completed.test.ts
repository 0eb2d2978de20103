import { afterAll, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import { dropQueue, openBackend, rawClient, uniqueQueue } from "./redis-test-env.js";
import { queueKeys } from "../../src/backends/redis/keys.js";

/** [plugin.queue] keep_completed = false on Redis: a completion retention of 0 deletes the job at once. */
describe("redis: completed jobs with no retention", () => {
  const queue = uniqueQueue("nokeep");
  afterAll(() => dropQueue(queue));

  it("deletes a completed job's hash and never adds it to the completed set; its id is free again", async () => {
    const backend = await openBackend(queue, { completedRetentionMs: 0 });
    const client = rawClient();
    try {
      const job = new Job({ task: "nokeep.done" });
      await backend.enqueue({ jobs: [job] });
      const [claimed] = await backend.claim({ workerId: "w1", limit: 1, leaseMs: 30_000 });
      await backend.complete({ workerId: "w1", job: claimed! });
      expect(await backend.getJob({ id: job.id })).toBeNull();
      expect(await client.zcard(queueKeys({ queue }).completed)).toBe(0);
      expect(await backend.depths()).toEqual({ ready: 0, scheduled: 0, running: 0, dead: 0 });
      expect((await backend.enqueue({ jobs: [new Job({ task: "nokeep.done", id: job.id })] })).inserted).toEqual([job.id]);
    } finally {
      client.disconnect();
      await backend.close();
    }
  });
});
