import { afterEach, describe, expect, it } from "vitest";
import { createMemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { PG_URL, dropSchema, uniqueSchema, withAdmin } from "../postgres/pg-test-env.js";
import { OPERATOR, QUEUE_TUNING, VIEWER, call, startAdminApp, type AdminApp } from "./admin-harness.js";

const memory = async () => ({ plugins: ["queue"], sections: `[plugin.queue]\nbackend = "memory"\n${QUEUE_TUNING}`, backend: createMemoryBackend(), cleanup: async () => {} });

/** What an adversarial review found in the admin API: one request must never be worth hundreds of calls, and an action is never done unaudited. */
describe("admin API: bounded requests and an audit trail that cannot be skipped", () => {
  let app: AdminApp | null = null;
  afterEach(async () => {
    await app?.close();
    app = null;
  });

  function postgres(schema: string) {
    return async () => ({
      plugins: ["database", "queue"],
      sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}`,
      cleanup: () => dropSchema(schema),
    });
  }

  it("refuses a batched request (several procedures in one GET or POST) without running any of them", async () => {
    app = await startAdminApp({ setup: memory });
    const names = Array.from({ length: 300 }, () => "deadLetters.groups").join(",");
    const input = encodeURIComponent(JSON.stringify(Object.fromEntries(Array.from({ length: 300 }, (_, i) => [i, {}]))));
    const get = await app.jfast.fetch(new Request(`http://service/jfast/admin/${names}?batch=1&input=${input}`, { headers: { authorization: `Bearer ${VIEWER}` } }));
    expect(get.status).toBe(400);
    const post = await app.jfast.fetch(
      new Request(`http://service/jfast/admin/deadLetters.retryMatching,deadLetters.retryMatching?batch=1`, {
        method: "POST",
        headers: { authorization: `Bearer ${OPERATOR}`, "content-type": "application/json" },
        body: JSON.stringify({ 0: {}, 1: {} }),
      }),
    );
    expect(post.status).toBe(400);
    expect((await call(app.jfast, "deadLetters.replays", { token: VIEWER })).data).toEqual([]);
    expect((await call(app.jfast, "audit.list", { token: VIEWER })).data.entries).toEqual([]);
  });

  it("runs two replays at once and refuses a third with 429 until one ends", async () => {
    app = await startAdminApp({ setup: memory });
    await app.killCharges(6);
    const start = () => call(app!.jfast, "deadLetters.retryMatching", { token: OPERATOR, input: { ratePerSecond: 1 }, mutation: true });
    expect((await start()).status).toBe(200);
    expect((await start()).status).toBe(200);
    const third = await start();
    expect(third.status).toBe(429);
    expect(third.error?.message).toMatch(/2 dead-letter replays are already running in this service/);
    const running = (await call(app.jfast, "deadLetters.replays", { token: VIEWER })).data as Array<{ state: string }>;
    expect(running.filter((r) => r.state === "running")).toHaveLength(2);
  });

  it("refuses an action whose audit entry cannot be written, and changes nothing", async () => {
    const schema = uniqueSchema("audit");
    app = await startAdminApp({ setup: postgres(schema) });
    // The trail made unwritable from outside, as a full disk or a revoked grant would.
    await withAdmin(async (c) => {
      await c.query(`CREATE FUNCTION "${schema}".no_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit store unavailable'; END $$`);
      await c.query(`CREATE TRIGGER no_audit BEFORE INSERT ON "${schema}".jfast_admin_audit FOR EACH ROW EXECUTE FUNCTION "${schema}".no_audit()`);
    });
    const pause = await call(app.jfast, "queues.pause", { token: OPERATOR, input: { task: "billing.charge" }, mutation: true });
    expect(pause.status).toBe(500);
    expect(pause.error?.message).toMatch(/queues.pause was not done: its audit entry could not be written \(.*audit store unavailable/);
    const tasks = (await call(app.jfast, "queues.list", { token: VIEWER })).data.tasks as Array<{ task: string; paused: boolean }>;
    expect(tasks.find((t) => t.task === "billing.charge")?.paused).toBe(false);

    const [id] = await app.killCharges(1);
    const retry = await call(app.jfast, "deadLetters.retry", { token: OPERATOR, input: { ids: [id] }, mutation: true });
    expect(retry.status).toBe(500);
    expect((await app.backend.depths()).dead).toBe(1);
  });

  it("keeps the trail append-only: a finished entry is never changed or deleted, by any role", async () => {
    const schema = uniqueSchema("audit");
    app = await startAdminApp({ setup: postgres(schema) });
    expect((await call(app.jfast, "queues.pause", { token: OPERATOR, input: { task: "billing.charge" }, mutation: true })).status).toBe(200);
    const [entry] = (await call(app.jfast, "audit.list", { token: VIEWER })).data.entries as Array<{ id: string; actor: string; outcome: Record<string, unknown> }>;
    expect(entry).toMatchObject({ actor: "alice", outcome: { paused: true } });
    await withAdmin(async (c) => {
      await expect(c.query(`UPDATE "${schema}".jfast_admin_audit SET actor = 'mallory'`)).rejects.toThrow(/append-only: update of a recorded entry refused/);
      await expect(c.query(`UPDATE "${schema}".jfast_admin_audit SET outcome = '{"pending": true}'`)).rejects.toThrow(/append-only/);
      await expect(c.query(`DELETE FROM "${schema}".jfast_admin_audit`)).rejects.toThrow(/append-only: delete of a recorded entry refused/);
      await expect(c.query(`TRUNCATE "${schema}".jfast_admin_audit`)).rejects.toThrow(/append-only/);
      const rows = await c.query(`SELECT actor FROM "${schema}".jfast_admin_audit`);
      expect(rows.rows).toEqual([{ actor: "alice" }]);
    });
  });
});

describe("admin API: redaction that cannot be worked around", () => {
  let app: AdminApp | null = null;
  afterEach(async () => {
    await app?.close();
    app = null;
  });

  it("hides the default secret-bearing fields, their values in error text, and keeps __proto__ keys", async () => {
    app = await startAdminApp({ setup: memory });
    const payload = JSON.parse('{"invoice":"inv-1","apiKey":"sk_live_abcdef","db_password":"hunter2-secret","nested":{"Authorization":"Bearer xyz123"},"__proto__":{"kept":true},"card_number":"4242424242424242"}');
    const [id] = await app.killCharges(1, () => payload);
    const { data } = await call(app.jfast, "jobs.get", { token: VIEWER, input: { id } });
    expect(data.job.payload).toEqual(
      JSON.parse('{"invoice":"inv-1","apiKey":"[redacted]","db_password":"[redacted]","nested":{"Authorization":"[redacted]"},"__proto__":{"kept":true},"card_number":"[redacted]"}'),
    );
    expect(Object.keys(data.job.payload)).toContain("__proto__");
    const everything = JSON.stringify((await call(app.jfast, "deadLetters.list", { token: VIEWER })).data);
    for (const secret of ["sk_live_abcdef", "hunter2-secret", "Bearer xyz123", "4242424242424242"]) expect(everything).not.toContain(secret);
  });

  it("redacts a redacted field's value where an error message or stack repeats it, and filters on what it shows", async () => {
    app = await startAdminApp({ setup: memory });
    // The charge task's message names payload.invoice; make the redacted value be that invoice number.
    const [id] = await app.killCharges(1, () => ({ invoice: "inv-777", card_number: "inv-777" }));
    const { data } = await call(app.jfast, "jobs.get", { token: VIEWER, input: { id } });
    for (const error of data.job.errors as Array<{ message: string; stack?: string }>) {
      expect(error.message).toBe("card declined for invoice [redacted] (attempt " + error.message.split("(attempt ")[1]);
      expect(error.stack ?? "").not.toContain("inv-777");
    }
    const guess = await call(app.jfast, "deadLetters.list", { token: VIEWER, input: { filter: { errorText: "inv-777" } } });
    expect(guess.data.items).toEqual([]);
    const shown = await call(app.jfast, "deadLetters.list", { token: VIEWER, input: { filter: { errorText: "invoice [redacted]" } } });
    expect(shown.data.items.map((d: { id: string }) => d.id)).toEqual([id]);
  });

  it("refuses a search by a redacted field, which would confirm a guess", async () => {
    app = await startAdminApp({ setup: memory });
    await app.killCharges(1, () => ({ invoice: "inv-1", user: { password: "hunter2" } }));
    const search = await call(app.jfast, "jobs.search", { token: VIEWER, input: { payload: { path: "user.password", equals: "hunter2" } } });
    expect(search.status).toBe(400);
    expect(search.error?.message).toMatch(/the payload field "password" is redacted in this service/);
    const configured = await call(app.jfast, "jobs.search", { token: VIEWER, input: { payload: { path: "card_number", equals: "x" } } });
    expect(configured.status).toBe(400);
    const allowed = await call(app.jfast, "jobs.search", { token: VIEWER, input: { payload: { path: "invoice", equals: "inv-1" } } });
    expect(allowed.status).toBe(200);
    expect(allowed.data.items).toHaveLength(1);
  });
});
