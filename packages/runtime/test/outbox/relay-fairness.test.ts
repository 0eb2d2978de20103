import { afterEach, describe, expect, it } from "vitest";
import { createMemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { Job } from "../../src/core/job.js";
import { withMethod } from "../conformance/harness.js";
import { dropSchema, eventually, uniqueSchema } from "../postgres/pg-test-env.js";
import { copyFixture, startShop } from "./outbox-env.js";

describe("outbox relay: shares its claims across tenants", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("a tenant's 10 rows are delivered before the next 100 of another tenant's backlog of 2 000", { timeout: 60_000 }, async () => {
    const schema = uniqueSchema("obfair");
    cleanups.push(() => dropSchema(schema));
    const fixture = await copyFixture("outbox-relay");
    cleanups.push(fixture.remove);
    const sent: Array<{ tenant: string | null; id: string }> = [];
    /** Each send the relay made, with the tenants of its jobs, and whether bolt's rows were committed before it. */
    const sends: Array<{ afterBolt: boolean; tenants: Array<string | null> }> = [];
    let boltCommitted = false;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const memory = createMemoryBackend();
    // The first send waits for the gate, so both backlogs are pending when the relay claims again.
    const backend = withMethod(memory, "enqueue", async (params) => {
      for (const job of params.jobs) sent.push({ tenant: job.tenantId, id: job.id });
      sends.push({ afterBolt: boltCommitted, tenants: params.jobs.map((job) => job.tenantId) });
      await gate;
      return memory.enqueue(params);
    });
    const app = await startShop({ root: fixture.root, schema, queue: { backend: "memory" }, backend });
    cleanups.push(() => app.jfast.stop());

    const big = Array.from({ length: 2000 }, (_, i) => new Job({ task: "mail.send_receipt", payload: { receipt_id: `a${i}` }, tenantId: "acme" }));
    await app.database.transaction((tx) => app.outbox.enqueue(tx, big));
    await eventually("the first batch in flight", async () => sent.length > 0);
    const small = Array.from({ length: 10 }, (_, i) => new Job({ task: "mail.send_receipt", payload: { receipt_id: `b${i}` }, tenantId: "bolt" }));
    await app.database.transaction((tx) => app.outbox.enqueue(tx, small));
    boltCommitted = true;
    open();

    await eventually("every row sent", async () => new Set(sent.map((s) => s.id)).size === big.length + small.length, 45_000);
    // Sends claimed before bolt's commit held acme's rows only; from the first send after it, count acme's rows
    // sent until bolt's last one has gone (that send included).
    const lastBolt = sends.findLastIndex((s) => s.tenants.includes("bolt"));
    const acmeMeanwhile = sends
      .slice(0, lastBolt + 1)
      .filter((s) => s.afterBolt)
      .reduce((n, s) => n + s.tenants.filter((t) => t === "acme").length, 0);
    expect(acmeMeanwhile, "acme rows sent while bolt's were waiting").toBeLessThan(100);
    expect(sent.filter((s) => s.tenant === "bolt").map((s) => s.id).sort()).toEqual(small.map((j) => j.id).sort());
  });

  it("with more tenants than a claim holds, claims go around them: every tenant's first row before any tenant's third", { timeout: 60_000 }, async () => {
    const schema = uniqueSchema("obring");
    cleanups.push(() => dropSchema(schema));
    const fixture = await copyFixture("outbox-relay");
    cleanups.push(fixture.remove);
    const sent: Array<{ tenant: string | null; n: number }> = [];
    const memory = createMemoryBackend();
    const backend = withMethod(memory, "enqueue", async (params) => {
      for (const job of params.jobs) sent.push({ tenant: job.tenantId, n: (job.payload as { n: number }).n });
      return memory.enqueue(params);
    });
    const app = await startShop({ root: fixture.root, schema, queue: { backend: "memory" }, backend });
    cleanups.push(() => app.jfast.stop());
    // 120 tenants of 3 rows each, more tenants than the 50 rows a claim takes.
    const jobs = [0, 1, 2].flatMap((n) => Array.from({ length: 120 }, (_, t) => new Job({ task: "mail.send_receipt", payload: { receipt_id: `t${t}-${n}`, n }, tenantId: `t${String(t).padStart(3, "0")}` })));
    await app.database.transaction((tx) => app.outbox.enqueue(tx, jobs));
    await eventually("every row sent", async () => sent.length >= jobs.length, 45_000);
    const lastFirst = sent.findLastIndex((s) => s.n === 0);
    const firstThird = sent.findIndex((s) => s.n === 2);
    expect(lastFirst).toBeLessThan(firstThird);
    expect(new Set(sent.filter((s) => s.n === 0).map((s) => s.tenant)).size).toBe(120);
  });

  it("rows without a tenant are a share of their own, and every row keeps its tenant on the way", async () => {
    const schema = uniqueSchema("obfair0");
    cleanups.push(() => dropSchema(schema));
    const fixture = await copyFixture("outbox-relay");
    cleanups.push(fixture.remove);
    const app = await startShop({ root: fixture.root, schema, queue: { backend: "memory" } });
    cleanups.push(() => app.jfast.stop());
    const jobs = [
      new Job({ task: "mail.send_receipt", payload: { receipt_id: "n1" }, tenantId: null }),
      new Job({ task: "mail.send_receipt", payload: { receipt_id: "t1" }, tenantId: "acme" }),
    ];
    await app.database.transaction((tx) => app.outbox.enqueue(tx, jobs));
    const stored = await eventually("both delivered", async () => {
      const found = await Promise.all(jobs.map((j) => app.backend.getJob({ id: j.id })));
      return found.every((f) => f !== null) ? found : null;
    });
    expect(stored.map((s) => s!.job.tenantId)).toEqual([null, "acme"]);
  });
});
