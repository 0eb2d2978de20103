import { afterEach, describe, expect, it } from "vitest";
import { defineTask } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import { PG_URL, dropSchema, uniqueSchema } from "../postgres/pg-test-env.js";
import { REDIS_URL, dropQueue, uniqueQueue } from "../redis/redis-test-env.js";
import { QUEUE_TUNING, VIEWER, call, eventually, startAdminApp, type AdminApp, type AdminBackendSetup } from "./admin-harness.js";

const done = defineTask("billing.refund", async () => {});

const SETUPS: Record<string, () => Promise<AdminBackendSetup>> = {
  postgres: async () => {
    const schema = uniqueSchema("search");
    return {
      plugins: ["database", "queue"],
      sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}`,
      cleanup: () => dropSchema(schema),
    };
  },
  redis: async () => {
    const queue = uniqueQueue("search");
    return { plugins: ["queue"], sections: `[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${queue}"\n${QUEUE_TUNING}`, cleanup: () => dropQueue(queue) };
  },
};

describe("admin jobs.search by task in every state, not only dead letters", () => {
  const apps: AdminApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  for (const backend of ["postgres", "redis"] as const) {
    it(`${backend}: a task's scheduled, completed and dead jobs, each state through its own listing`, async () => {
      const app = await startAdminApp({ setup: SETUPS[backend]!, tasks: [done] });
      apps.push(app);
      const queue = app.jfast.require<QueueProvider>("queue");
      const later = new Job({ task: "billing.refund", payload: { n: 1 }, delayMs: 3_600_000, tenantId: "acme" });
      const now = new Job({ task: "billing.refund", payload: { n: 2 }, tenantId: "acme" });
      const other = new Job({ task: "billing.charge", payload: { invoice: "x" }, delayMs: 3_600_000 });
      await queue.enqueue([later, now, other]);
      await eventually("the refund completed", async () => (await app.backend.getJob({ id: now.id }))?.state === "completed");
      const [dead] = await app.killCharges(1);

      const search = async (input: Record<string, unknown>) => {
        const answer = await call(app.jfast, "jobs.search", { token: VIEWER, input });
        expect(answer.error, JSON.stringify(input)).toBeNull();
        return answer.data as { items: Array<{ id: string; state: string }>; scope: string; nextCursor: string | null };
      };
      const scheduled = await search({ task: "billing.refund", state: "scheduled" });
      expect(scheduled.items.map((j) => j.id)).toEqual([later.id]);
      expect(scheduled.scope).toBe("scheduled jobs by task, newest first, a bounded window of the state's index per page");
      expect((await search({ task: "billing.refund", state: "completed" })).items.map((j) => j.id)).toEqual([now.id]);
      expect((await search({ tenant: "acme", state: "completed" })).items.map((j) => j.id)).toEqual([now.id]);
      expect((await search({ task: "billing.refund", state: "running" })).items).toEqual([]);
      expect((await search({ task: "billing.charge", state: "scheduled" })).items.map((j) => j.id)).toEqual([other.id]);
      expect((await search({ task: "billing.charge", state: "dead" })).items.map((j) => j.id)).toEqual([dead]);
      // By id, "scheduled" is a ready job whose time has not come.
      expect((await search({ id: later.id, state: "scheduled" })).items.map((j) => j.id)).toEqual([later.id]);
    });
  }
});
