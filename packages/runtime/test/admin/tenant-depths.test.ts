import { afterEach, describe, expect, it } from "vitest";
import { defineTask } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import { PG_URL, dropSchema, uniqueSchema } from "../postgres/pg-test-env.js";
import { OPERATOR, QUEUE_TUNING, VIEWER, call, startAdminApp, type AdminApp, type AdminBackendSetup } from "./admin-harness.js";

const SETUPS: Record<string, () => () => Promise<AdminBackendSetup>> = {
  memory: () => async () => ({ plugins: ["queue"], sections: `[plugin.queue]\nbackend = "memory"\n${QUEUE_TUNING}`, cleanup: async () => {} }),
  postgres: () => {
    const schema = uniqueSchema("tenants");
    return async () => ({
      plugins: ["database", "queue"],
      sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}`,
      cleanup: () => dropSchema(schema),
    });
  },
};

for (const [name, setup] of Object.entries(SETUPS)) {
  describe(`${name}: admin queues.tenants`, () => {
    const record = defineTask("billing.record", async () => undefined);
    let app: AdminApp;
    afterEach(async () => {
      await app?.close();
    });

    it("counts each tenant's waiting jobs and the wait of its oldest due one, most waiting first", async () => {
      app = await startAdminApp({ setup: setup(), tasks: [record] });
      // Paused: the jobs stay waiting, as a busy queue's would.
      expect((await call(app.jfast, "queues.pause", { token: OPERATOR, input: { task: "billing.record" }, mutation: true })).status).toBe(200);
      const queue = app.jfast.require("queue");
      const at = (ms: number) => new Date(Date.now() - ms);
      await queue.enqueue([
        ...Array.from({ length: 5 }, () => new Job({ task: "billing.record", tenantId: "acme", availableAt: at(1000) })),
        new Job({ task: "billing.record", tenantId: "bolt", availableAt: at(60_000) }),
        new Job({ task: "billing.record", tenantId: "bolt" }),
        new Job({ task: "billing.record", tenantId: null, delayMs: 60_000 }),
      ]);
      const { status, data } = await call(app.jfast, "queues.tenants", { token: VIEWER });
      expect(status).toBe(200);
      expect(data).toMatchObject({ enabled: true, supported: true, reason: null, exact: true });
      expect(data.tenants.map((t: { tenantId: string | null; ready: number; scheduled: number; running: number }) => [t.tenantId, t.ready, t.scheduled, t.running])).toEqual([
        ["acme", 5, 0, 0],
        ["bolt", 2, 0, 0],
        [null, 0, 1, 0],
      ]);
      const bolt = data.tenants.find((t: { tenantId: string | null }) => t.tenantId === "bolt");
      expect(bolt.waitMs).toBeGreaterThanOrEqual(59_000);
      expect(data.tenants.find((t: { tenantId: string | null }) => t.tenantId === null)).toMatchObject({ oldestReadyAt: null, waitMs: 0 });
    });
  });
}
