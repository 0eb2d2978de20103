import { afterAll, afterEach, describe, expect, it } from "vitest";
import { queueKeys } from "../../src/backends/redis/keys.js";
import { defineTask } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import { PG_URL, dropSchema, uniqueSchema } from "../postgres/pg-test-env.js";
import { REDIS_URL, dropQueue, rawClient, uniqueQueue } from "../redis/redis-test-env.js";
import { QUEUE_TUNING, VIEWER, call, eventually, startAdminApp, type AdminApp } from "./admin-harness.js";

/**
 * A secret reappears in forms a plain search for its value misses: escaped inside a JSON string (an error built
 * with JSON.stringify(payload)), inside a unique key derived from the payload, in a quarantined job's stored text.
 * None of them may leave the service, and no filter may confirm a guess at one.
 */
const SECRET = 'hun"ter2\\x';

/** Fails with the payload as a client library would report a refused request: JSON inside a JSON string. */
const refund = defineTask("billing.refund", async (payload: Record<string, unknown>) => {
  throw new Error(`refund refused: ${JSON.stringify({ request: JSON.stringify(payload) })} / ${JSON.stringify(payload)}`);
});

function postgres() {
  const schema = uniqueSchema("redact");
  return async () => ({
    plugins: ["database", "queue"],
    sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}`,
    cleanup: () => dropSchema(schema),
  });
}

/** Every form a person could search for, or find in an answer. */
const FORMS = [SECRET, JSON.stringify(SECRET).slice(1, -1), JSON.stringify(JSON.stringify(SECRET)).slice(1, -1), "hunter", 'hun\\"ter'];

describe("admin API: escaped and derived forms of a secret", () => {
  let app: AdminApp | null = null;
  const raw = rawClient();
  afterEach(async () => {
    await app?.close();
    app = null;
  });
  afterAll(() => raw.disconnect());

  it("hides a secret escaped in error text and in a derived unique key, and no error-text filter finds it", async () => {
    app = await startAdminApp({ setup: postgres(), tasks: [refund] });
    const payload = { invoice: "inv-9", user: { password: SECRET } };
    const job = new Job({ task: "billing.refund", payload, maxAttempts: 1, unique: { key: JSON.stringify(payload) } });
    await app.jfast.require("queue").enqueue(job);
    await eventually("the refund dead", async () => (await app!.backend.depths()).dead === 1);

    const detail = (await call(app.jfast, "jobs.get", { token: VIEWER, input: { id: job.id } })).data.job;
    expect(detail.unique.key).toMatch(/^sha256:[0-9a-f]{12}$/);
    const answers = JSON.stringify([detail, (await call(app.jfast, "deadLetters.list", { token: VIEWER })).data, (await call(app.jfast, "deadLetters.groups", { token: VIEWER })).data]);
    for (const form of FORMS) expect(answers).not.toContain(form);
    // What an operator needs still shows: the message's shape and the other fields.
    expect(detail.errors[0].message).toContain("refund refused");
    expect(detail.errors[0].message).toContain("inv-9");

    for (const form of FORMS) {
      const found = await call(app.jfast, "deadLetters.list", { token: VIEWER, input: { filter: { errorText: form } } });
      expect(found.status).toBe(200);
      expect(found.data.items).toEqual([]);
      const counted = await call(app.jfast, "deadLetters.preview", { token: VIEWER, input: { filter: { errorText: form } } });
      expect(counted.data.count).toBe(0);
    }
    const shown = await call(app.jfast, "deadLetters.list", { token: VIEWER, input: { filter: { errorText: "[redacted]" } } });
    expect(shown.data.items.map((d: { id: string }) => d.id)).toEqual([job.id]);
  });

  it("shows a quarantined job's stored text redacted: decoded where it is JSON, masked where it is not", async () => {
    const queue = uniqueQueue("redact");
    app = await startAdminApp({
      setup: async () => ({
        plugins: ["queue"],
        sections: `[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${queue}"\n${QUEUE_TUNING}`,
        cleanup: () => dropQueue(queue),
      }),
    });
    const keys = queueKeys({ queue });
    // Valid JSON that is not a job (no task), and text that is not JSON at all: both quarantined as stored.
    await raw.hset(keys.job("no-task"), { json: JSON.stringify({ id: "no-task", payload: { invoice: "inv-1", password: "hunter2-stored" } }), state: "ready" });
    await raw.hset(keys.job("not-json"), { json: '{"password":"hunter2-stored", broken', state: "ready" });
    await raw.lpush(keys.ready, "no-task", "not-json");
    await eventually("both quarantined", async () => (await app!.backend.depths()).dead === 2);

    const decoded = (await call(app.jfast, "jobs.get", { token: VIEWER, input: { id: "no-task" } })).data.job;
    expect(decoded.task).toBe("jfast.corrupt_job");
    expect(JSON.parse(decoded.payload.raw)).toEqual({ id: "no-task", payload: { invoice: "inv-1", password: "[redacted]" } });
    const masked = (await call(app.jfast, "jobs.get", { token: VIEWER, input: { id: "not-json" } })).data.job;
    expect(masked.payload.raw).toMatch(/^\[redacted\] \(\d+ characters that are not JSON\)$/);
    const everything = JSON.stringify((await call(app.jfast, "deadLetters.list", { token: VIEWER })).data);
    expect(everything).not.toContain("hunter2-stored");
  });
});
