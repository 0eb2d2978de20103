import { describe, expect, it } from "vitest";
import { createMemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { defineTask } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import { call, eventually, OPERATOR, QUEUE_TUNING, startAdminApp, VIEWER } from "./admin-harness.js";

describe("admin API: blocked keys of tasks with orderedBy", () => {
  it("keys.blocked lists a key a dead job holds, and keys.skip (operator, audited) lets its next job run", async () => {
    const ran: string[] = [];
    const apply = defineTask("ledger.apply", { orderedBy: (p: { account: string }) => p.account }, async (p: { account: string; n: number; fail?: boolean }) => {
      if (p.fail) throw new Error("ledger refused the entry");
      ran.push(`${p.account}${p.n}`);
    });
    const app = await startAdminApp({
      setup: async () => ({ plugins: ["queue"], sections: `[plugin.queue]\nbackend = "memory"\n${QUEUE_TUNING}`, backend: createMemoryBackend(), cleanup: async () => {} }),
      tasks: [apply],
    });
    try {
      const first = new Job({ task: "ledger.apply", payload: { account: "acc-1", n: 1, fail: true } });
      await app.jfast.require("queue").enqueue([first, new Job({ task: "ledger.apply", payload: { account: "acc-1", n: 2 } }), new Job({ task: "ledger.apply", payload: { account: "acc-2", n: 1 } })]);
      const blocked = await eventually("acc-1 blocked", async () => {
        const { data } = await call(app.jfast, "keys.blocked", { token: VIEWER });
        return data.keys.length > 0 ? data : null;
      });
      expect(blocked).toEqual({ enabled: true, supported: true, keys: [expect.objectContaining({ task: "ledger.apply", key: "acc-1", jobId: first.id, waiting: 1 })] });
      // The other account was not held; acc-1's next entry was.
      await eventually("acc-2 ran", async () => ran.includes("acc-21"));
      expect(ran).not.toContain("acc-12");

      const refused = await call(app.jfast, "keys.skip", { token: VIEWER, mutation: true, input: { task: "ledger.apply", key: "acc-1" } });
      expect(refused.error?.data.code).toBe("FORBIDDEN");
      const skipped = await call(app.jfast, "keys.skip", { token: OPERATOR, mutation: true, input: { task: "ledger.apply", key: "acc-1" } });
      expect(skipped.data).toEqual({ task: "ledger.apply", key: "acc-1", skipped: [first.id] });
      await eventually("acc-1's next entry ran", async () => ran.includes("acc-12"));
      expect((await call(app.jfast, "keys.blocked", { token: VIEWER })).data.keys).toEqual([]);
      const audit = await call(app.jfast, "audit.list", { token: VIEWER });
      expect(audit.data.entries).toEqual(expect.arrayContaining([expect.objectContaining({ action: "keys.skip", ids: [first.id] })]));
    } finally {
      await app.close();
    }
  });
});
