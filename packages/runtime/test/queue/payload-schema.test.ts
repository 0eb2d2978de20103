import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import * as v from "valibot";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTask, task } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import type { TaskDefinition } from "../../src/core/task.js";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { dropSchema, eventually, PG_URL, silentLogger, uniqueSchema, withAdmin } from "../postgres/pg-test-env.js";

/**
 * Payloads checked at run time (docs/tasks.md#payload-schemas) with Standard Schema, whichever library made the
 * schema (zod and valibot here): an enqueue that does not fit is refused with each bad field's path and reason and
 * nothing written (queue, outbox, flows); a stored job that no longer fits dies before its handler, without
 * retries; the handler gets the schema's output.
 */
const SCHEMAS = {
  zod: z.object({ order_id: z.number().int(), email: z.email(), lines: z.array(z.object({ sku: z.string().min(1) })).default([]) }),
  valibot: v.object({
    order_id: v.pipe(v.number(), v.integer()),
    email: v.pipe(v.string(), v.email()),
    lines: v.optional(v.array(v.object({ sku: v.pipe(v.string(), v.minLength(1)) })), []),
  }),
} as const;

for (const [library, schema] of Object.entries(SCHEMAS)) {
  describe(`payload schemas (${library})`, () => {
    const cleanups: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    const seen: unknown[] = [];
    const charge = task("orders.charge", { schema, maxAttempts: 5 }, async (payload) => {
      seen.push(payload);
      return { charged: payload.order_id };
    });

    async function app(tasks: TaskDefinition[]): Promise<{ jfast: Jfast; schema: string }> {
      const dbSchema = uniqueSchema("payloads");
      const dir = await mkdtemp(path.join(tmpdir(), "jfast-payloads-"));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      cleanups.push(() => dropSchema(dbSchema));
      await writeFile(
        path.join(dir, "jfast.toml"),
        `[service]\nname = "payloads"\n[plugins]\nenabled = ["database", "queue", "outbox"]\n[plugin.database]\nurl = "${PG_URL}"\nschema = "${dbSchema}"\npool_size = 4\n[plugin.queue]\nbackend = "postgres"\npoll_interval = 1\nbackoff_base = 0.05\n`,
      );
      const jfast = await createJfast({ root: dir, env: {}, logger: silentLogger, tasks });
      await jfast.start();
      cleanups.push(() => jfast.stop());
      return { jfast, schema: dbSchema };
    }

    const jobCount = async (dbSchema: string) => withAdmin(async (c) => (await c.query(`SELECT count(*)::int AS n FROM "${dbSchema}".jfast_jobs`)).rows[0].n as number);

    it("refuses a payload that does not fit at enqueue, naming each bad field, and writes nothing", async () => {
      const { jfast, schema: dbSchema } = await app([charge]);
      const queue = jfast.require("queue");
      const bad = new Job({ task: "orders.charge", payload: { order_id: "42", email: "not-an-email", lines: [{ sku: "" }] } });
      const error = await queue.enqueue(bad).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "PAYLOAD_INVALID", task: "orders.charge" });
      const issues = (error as { issues: { path: string; message: string }[] }).issues;
      expect(issues.map((i) => i.path).sort()).toEqual(["email", "lines.0.sku", "order_id"]);
      expect((error as Error).message).toContain("order_id:");
      expect((error as Error).message).toContain("see: jfast docs tasks#payload-schemas");
      // A batch with one bad job writes none of them.
      await expect(queue.enqueue([charge.job({ order_id: 1, email: "a@b.co" }), bad])).rejects.toMatchObject({ code: "PAYLOAD_INVALID" });
      expect(await jobCount(dbSchema)).toBe(0);
      const ok = await queue.enqueue(charge.job({ order_id: 1, email: "a@b.co" }));
      expect(ok.inserted).toHaveLength(1);
    });

    it("refuses it through the outbox and in a flow too, writing nothing of the transaction's jobs", async () => {
      const { jfast, schema: dbSchema } = await app([charge]);
      const database = jfast.require("database");
      const outbox = jfast.require("outbox");
      const queue = jfast.require("queue");
      const bad = () => new Job({ task: "orders.charge", payload: { order_id: 1.5, email: "a@b.co" } });
      await expect(database.transaction((tx) => outbox.enqueue(tx, bad()))).rejects.toMatchObject({ code: "PAYLOAD_INVALID" });
      await expect(queue.flow({ steps: { a: charge.job({ order_id: 1, email: "a@b.co" }), b: { job: bad(), after: ["a"] } } })).rejects.toMatchObject({ code: "PAYLOAD_INVALID" });
      await expect(database.transaction((tx) => outbox.flow(tx, { steps: { a: bad() } }))).rejects.toMatchObject({ code: "PAYLOAD_INVALID" });
      expect(await jobCount(dbSchema)).toBe(0);
      expect((await queue.backend.listFlows({ limit: 5 })).rows).toEqual([]);
    });

    it("gives the handler the schema's output, and dead-letters a stored job that no longer fits without retrying", async () => {
      const { jfast } = await app([charge]);
      const queue = jfast.require("queue");
      seen.length = 0;
      const good = charge.job({ order_id: 7, email: "a@b.co" });
      // A job stored before the schema changed: written straight to the backend, as an old deploy would have.
      const stale = new Job({ task: "orders.charge", payload: { order_id: "7", email: "a@b.co" }, maxAttempts: 5 });
      await queue.enqueue(good);
      await queue.backend.enqueue({ jobs: [stale] });
      const worker = jfast.createWorker({ concurrency: 2 });
      worker.start();
      cleanups.push(() => worker.stop({ graceMs: 0 }));
      await eventually("the good job completed", async () => (await queue.backend.getJob({ id: good.id }))?.state === "completed");
      expect(seen).toEqual([{ order_id: 7, email: "a@b.co", lines: [] }]);
      const dead = await eventually("the stale job dead", async () => {
        const info = await queue.backend.getJob({ id: stale.id });
        return info?.state === "dead" ? info : undefined;
      });
      expect(dead.job.attempts).toBe(1);
      expect(dead.job.errors).toHaveLength(1);
      expect(dead.job.errors[0]).toMatchObject({ class: "PayloadInvalidError", message: expect.stringContaining("order_id:") });
    });
  });
}

describe("payload schemas, declared", () => {
  it("refuses a schema that is not a Standard Schema, naming what it takes", () => {
    expect(() => defineTask("orders.bad", { schema: { parse: () => 1 } as never }, async () => undefined)).toThrow(/Standard Schema/);
  });
});
