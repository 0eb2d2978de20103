import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterEach, describe, expect, it } from "vitest";
import { PG_URL, dropSchema, uniqueSchema, withAdmin } from "../postgres/pg-test-env.js";
import { OPERATOR, QUEUE_TUNING, VIEWER, call, startAdminApp, type AdminApp } from "./admin-harness.js";

/**
 * The scanning views (deadLetters.groups, a filtered deadLetters.preview, jobs.search by task) read up to 10 000
 * dead letters a call. They must never hold the service's event loop for long, and no caller may run them in a loop.
 */
describe("admin API: scans that share the event loop", () => {
  let app: AdminApp | null = null;
  let schema = "";
  afterEach(async () => {
    await app?.close();
    app = null;
  });

  function postgres() {
    schema = uniqueSchema("scan");
    const own = schema;
    return async () => ({
      plugins: ["database", "queue"],
      sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${own}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}`,
      cleanup: () => dropSchema(own),
    });
  }

  /** One dead letter of about 22 KB (payload and errors), copied in SQL to `count` of them. */
  async function bigDeadLetters(count: number): Promise<void> {
    const lines = Array.from({ length: 180 }, (_, i) => ({ sku: `sku-${i}`, description: `line ${i} of a long invoice `.repeat(3), qty: i }));
    const [id] = await app!.killCharges(1, () => ({ invoice: "inv-big", password: "hunter2-big", lines }));
    await withAdmin(async (c) => {
      const columns = (
        await c.query(
          `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'jfast_jobs' AND is_generated = 'NEVER' AND is_identity = 'NO' AND column_name <> 'id' ORDER BY ordinal_position`,
          [schema],
        )
      ).rows.map((r: { column_name: string }) => `"${r.column_name}"`);
      await c.query(
        `INSERT INTO "${schema}".jfast_jobs (id, ${columns.join(", ")}) SELECT $1 || '-' || g, ${columns.join(", ")} FROM "${schema}".jfast_jobs, generate_series(2, $2::int) g WHERE id = $1`,
        [id, count],
      );
      const size = await c.query(`SELECT avg(length(payload::text) + length(errors::text))::int AS bytes, count(*)::int AS n FROM "${schema}".jfast_jobs WHERE state = 'dead'`);
      expect(size.rows[0].n).toBe(count);
      expect(size.rows[0].bytes).toBeGreaterThan(20_000);
    });
  }

  // The bound is generous: the suite shares two cores with the other files running beside it, which makes timers
  // late too. Before the scans yielded, one stalled the loop for seconds.
  it("keeps the event loop's longest stall under 500 ms while scanning 2 000 dead letters of 22 KB", { timeout: 120_000 }, async () => {
    app = await startAdminApp({ setup: postgres() });
    await bigDeadLetters(2000);
    const scans: Array<[string, unknown, (data: any) => void]> = [
      ["deadLetters.groups", undefined, (data) => expect(data.groups.reduce((n: number, g: { count: number }) => n + g.count, 0)).toBe(2000)],
      ["deadLetters.preview", { filter: { errorText: "card declined" } }, (data) => expect(data.count).toBe(2000)],
      ["deadLetters.preview", { filter: { errorText: "hunter2-big" } }, (data) => expect(data.count).toBe(0)],
      ["jobs.search", { task: "billing.charge", limit: 100 }, (data) => expect(data.items).toHaveLength(100)],
    ];
    for (const [procedure, input, check] of scans) {
      const delay = monitorEventLoopDelay({ resolution: 10 });
      delay.enable();
      const began = performance.now();
      const answer = await call(app.jfast, procedure, { token: VIEWER, input });
      const took = performance.now() - began;
      delay.disable();
      expect(answer.status).toBe(200);
      check(answer.data);
      const maxStallMs = delay.max / 1e6;
      console.log(`${procedure} ${JSON.stringify(input ?? {})}: ${took.toFixed(0)} ms, longest event-loop stall ${maxStallMs.toFixed(0)} ms`);
      expect(maxStallMs).toBeLessThan(500);
    }
  });

  it("lets one caller run 10 scans per 10 s, then answers 429 with Retry-After; other callers and cheap views are not held", async () => {
    app = await startAdminApp({ setup: postgres() });
    await app.killCharges(2);
    for (let i = 0; i < 10; i++) expect((await call(app.jfast, "deadLetters.groups", { token: VIEWER })).status).toBe(200);
    for (const [procedure, input] of [
      ["deadLetters.groups", undefined],
      ["deadLetters.preview", { filter: { task: "billing.charge" } }],
      ["jobs.search", { task: "billing.charge" }],
    ] as const) {
      const request = new Request(`http://service/jfast/admin/${procedure}${input ? `?input=${encodeURIComponent(JSON.stringify(input))}` : ""}`, { headers: { authorization: `Bearer ${VIEWER}` } });
      const response = await app.jfast.fetch(request);
      expect(response.status).toBe(429);
      const retryAfter = Number(response.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(10);
      const body = (await response.json()) as { error: { message: string; data: { code: string; retryAfterSeconds: number } } };
      expect(body.error.data).toMatchObject({ code: "TOO_MANY_REQUESTS", retryAfterSeconds: retryAfter });
      expect(body.error.message).toMatch(/try again in \d+ s.*jfast docs admin-api#scan-limits/);
    }
    // Another token has its own bucket; the cheap views (an unfiltered count, the list) are not scans.
    expect((await call(app.jfast, "deadLetters.groups", { token: OPERATOR })).status).toBe(200);
    expect((await call(app.jfast, "deadLetters.preview", { token: VIEWER, input: {} })).status).toBe(200);
    expect((await call(app.jfast, "deadLetters.list", { token: VIEWER })).status).toBe(200);
    // One call comes back after a second.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await call(app.jfast, "deadLetters.groups", { token: VIEWER })).status).toBe(200);
    expect((await call(app.jfast, "deadLetters.groups", { token: VIEWER })).status).toBe(429);
  });
});
