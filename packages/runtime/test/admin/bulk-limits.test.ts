import { afterEach, describe, expect, it } from "vitest";
import { PG_URL, dropSchema, uniqueSchema } from "../postgres/pg-test-env.js";
import { DASHBOARD, OPERATOR, QUEUE_TUNING, VIEWER, call, startAdminApp, type AdminApp } from "./admin-harness.js";

/**
 * docs/dashboard.md#users: an operator retries and discards one dead letter or outbox row at a time; acting on
 * many, or on everything a filter selects, is an admin's. The service holds to it whatever the dashboard sends.
 */
describe("admin API: what an operator may act on per call", () => {
  let app: AdminApp | null = null;
  afterEach(async () => {
    await app?.close();
    app = null;
  });

  it("refuses an operator's call naming several ids or a filter, lets one id through, and lets an admin act on many", async () => {
    const schema = uniqueSchema("bulk");
    app = await startAdminApp({
      setup: async () => ({
        plugins: ["database", "queue", "outbox"],
        sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}`,
        cleanup: () => dropSchema(schema),
      }),
    });
    const ids = await app.killCharges(6);
    const olga = { token: DASHBOARD, actor: "operator olga", mutation: true };
    for (const procedure of ["deadLetters.retry", "deadLetters.discard", "outbox.retry", "outbox.discard"]) {
      const many = await call(app.jfast, procedure, { ...olga, input: { ids: ids.slice(0, 2) } });
      expect(many.status).toBe(403);
      expect(many.error?.message).toMatch(new RegExp(`olga has the operator role in the dashboard "ops-dashboard", which acts on 1 id per call; this ${procedure.replace(".", "\\.")} names 2.*jfast docs dashboard#users`));
    }
    for (const [procedure, input] of [
      ["deadLetters.retryMatching", { filter: { task: "billing.charge" } }],
      ["deadLetters.discardMatching", {}],
      ["jobs.bulk", { action: "delete", state: "ready" }],
    ] as const) {
      const bulk = await call(app.jfast, procedure, { ...olga, input });
      expect(bulk.status).toBe(403);
      expect(bulk.error?.message).toMatch(/bulk actions need the admin role \(jfast docs dashboard#users\)/);
    }
    // Nothing was done, and nothing was audited as done.
    expect((await app.backend.depths()).dead).toBe(6);
    expect((await call(app.jfast, "audit.list", { token: VIEWER })).data.entries).toEqual([]);

    expect((await call(app.jfast, "deadLetters.retry", { ...olga, input: { ids: [ids[0]] } })).status).toBe(200);
    const ann = await call(app.jfast, "deadLetters.discard", { token: DASHBOARD, actor: "admin ann", mutation: true, input: { ids: ids.slice(1, 4) } });
    expect(ann.status).toBe(200);
    expect(ann.data.discarded).toHaveLength(3);
    const script = await call(app.jfast, "deadLetters.discard", { token: OPERATOR, mutation: true, input: { ids: ids.slice(4) } });
    expect(script.status).toBe(200);
    const tooMany = await call(app.jfast, "deadLetters.retry", { token: OPERATOR, mutation: true, input: { ids: Array.from({ length: 1001 }, (_, i) => `id-${i}`) } });
    expect(tooMany.status).toBe(400);
  });
});
