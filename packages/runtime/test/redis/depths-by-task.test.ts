import { afterEach, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import { dropQueue, openBackend, uniqueQueue } from "./redis-test-env.js";

describe("redis: depths per task past the sample", () => {
  const queues: string[] = [];
  afterEach(async () => {
    for (const queue of queues.splice(0)) await dropQueue(queue);
  });

  it("estimates from 1 000 jobs per list when a list is longer, and says so", async () => {
    const queue = uniqueQueue("depths");
    queues.push(queue);
    const backend = await openBackend(queue);
    try {
      // 3 000 ready jobs, two of every three for task a, interleaved: any 1 000 of them hold the same mix.
      const jobs = Array.from({ length: 3000 }, (_, i) => new Job({ task: i % 3 === 2 ? "est.b" : "est.a", payload: { i } }));
      for (let i = 0; i < jobs.length; i += 500) await backend.enqueue({ jobs: jobs.slice(i, i + 500) });
      await backend.enqueue({ jobs: [new Job({ task: "est.c", delayMs: 60_000 })] });
      const { tasks, exact } = await backend.depthsByTask();
      expect(exact).toBe(false);
      expect(tasks["est.a"]!.ready).toBeGreaterThanOrEqual(1990);
      expect(tasks["est.a"]!.ready).toBeLessThanOrEqual(2010);
      expect(tasks["est.a"]!.ready + tasks["est.b"]!.ready).toBeGreaterThanOrEqual(2995);
      expect(tasks["est.a"]!.ready + tasks["est.b"]!.ready).toBeLessThanOrEqual(3005);
      // The scheduled set is small: counted exactly.
      expect(tasks["est.c"]).toEqual({ ready: 0, scheduled: 1, running: 0, dead: 0 });
      expect((await backend.depths()).ready).toBe(3000);
    } finally {
      await backend.close();
    }
  });
});
