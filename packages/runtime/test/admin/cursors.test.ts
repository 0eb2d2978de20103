import { afterEach, describe, expect, it } from "vitest";
import { PG_URL, dropSchema, uniqueSchema } from "../postgres/pg-test-env.js";
import { QUEUE_TUNING, VIEWER, call, startAdminApp, type AdminApp } from "./admin-harness.js";

const HUGE = "9223372036854775807";

/** A cursor is what the service handed out: anything else is a 400 naming the fix, never a driver's error text. */
describe("admin API: cursors out of range or made up", () => {
  let app: AdminApp | null = null;
  afterEach(async () => {
    await app?.close();
    app = null;
  });

  it("answers 400 without the database's text for a huge, negative or made-up cursor of every paged view", async () => {
    const schema = uniqueSchema("cursor");
    app = await startAdminApp({
      setup: async () => ({
        plugins: ["database", "queue", "outbox"],
        sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}`,
        cleanup: () => dropSchema(schema),
      }),
    });
    await app.killCharges(3);
    const calls: Array<[string, unknown]> = [
      ["deadLetters.list", { cursor: HUGE }],
      ["deadLetters.list", { cursor: "-1" }],
      ["deadLetters.list", { cursor: "1e3" }],
      ["deadLetters.list", { cursor: HUGE, filter: { task: "billing.charge" } }],
      ["jobs.search", { task: "billing.charge", cursor: `o:${HUGE}` }],
      ["jobs.search", { payload: { path: "invoice", equals: "inv-1" }, cursor: `k:${HUGE}` }],
      ["jobs.search", { payload: { path: "invoice", equals: "inv-1" }, cursor: "k:x|y" }],
      ["jobs.list", { state: "dead", after: HUGE }],
      ["jobs.list", { state: "ready", after: HUGE }],
      ["jobs.list", { state: "completed", after: `${HUGE}|${HUGE}` }],
      ["outbox.dead", { offset: Number(HUGE) }],
      ["audit.list", { before: HUGE }],
    ];
    for (const [procedure, input] of calls) {
      const answer = await call(app.jfast, procedure, { token: VIEWER, input });
      expect({ procedure, input, status: answer.status }).toEqual({ procedure, input, status: 400 });
      expect(answer.error?.message).not.toMatch(/out of range|bigint|syntax|postgres|invalid input syntax/i);
    }
    // The cursors the service hands out still work.
    const first = await call(app.jfast, "deadLetters.list", { token: VIEWER, input: { limit: 2 } });
    const next = await call(app.jfast, "deadLetters.list", { token: VIEWER, input: { limit: 2, cursor: first.data.nextCursor } });
    expect(next.status).toBe(200);
    expect(next.data.items).toHaveLength(1);
  });
});
