import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast } from "./jfast-process.js";

// `jfast jobs check-payloads` against the PostgreSQL server on 127.0.0.1:5432 (a schema of its own): jobs enqueued
// under one payload schema, then counted against the schema a new version of the code declares.
const PG_URL = "postgres://postgres@127.0.0.1:5432/test";

const TASKS = (cardRequired: boolean) => `
import { task } from "@jfast/runtime";
import * as v from "valibot";
import { z } from "zod";
export const charge = task("orders.charge", { schema: z.object({ order_id: z.number(), card: z.string()${cardRequired ? "" : ".optional()"} }) }, async () => undefined);
export const send = task("orders.send", { schema: v.object({ to: v.string() }) }, async () => undefined);
export const plain = task("orders.plain", async () => undefined);
`;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe("jfast jobs check-payloads on the PostgreSQL queue", () => {
  it("counts per task the ready and scheduled jobs the current schema would refuse, and exits 1 when there are any", { timeout: 180_000 }, async () => {
    const schema = `jfast_cli_${randomUUID().slice(0, 8)}`;
    const created = await createServiceRoot({
      "jfast.toml": `[service]\nname = "svc"\n[plugins]\nenabled = ["database", "queue"]\n[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\n[plugin.queue]\nbackend = "postgres"\n`,
      "modules/orders/tasks.ts": TASKS(false),
    });
    cleanups.push(created.remove, async () => {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    });
    const root = ["--root", created.root];
    const enqueue = async (task: string, payload: unknown, ...extra: string[]) => {
      const result = await runJfast(["jobs", "enqueue", task, "--payload", JSON.stringify(payload), ...extra, ...root]);
      expect(result.code, result.stderr).toBe(0);
      return result.stdout.trim();
    };
    await enqueue("orders.charge", { order_id: 1, card: "4242" });
    const noCard = await enqueue("orders.charge", { order_id: 2 });
    const laterNoCard = await enqueue("orders.charge", { order_id: 3 }, "--delay", "600");
    await enqueue("orders.send", { to: "ann@example.com" });
    await enqueue("orders.plain", { anything: true });

    const before = await runJfast(["jobs", "check-payloads", ...root]);
    expect(before.code, before.stderr).toBe(0);
    expect(before.stdout).toContain("every waiting payload fits its task's schema");

    // The next version of the code requires a card.
    await writeFile(path.join(created.root, "modules/orders/tasks.ts"), TASKS(true));
    const after = await runJfast(["jobs", "check-payloads", "--json", ...root]);
    expect(after.code, after.stderr).toBe(1);
    const report = JSON.parse(after.stdout) as { tasks: Array<{ task: string; ready: { checked: number; refused: number }; scheduled: { checked: number; refused: number }; examples: Array<{ id: string; state: string; issues: Array<{ path: string }> }> }>; refused: number };
    expect(report.refused).toBe(2);
    expect(report.tasks.map((t) => t.task)).toEqual(["orders.charge", "orders.send"]);
    const charge = report.tasks.find((t) => t.task === "orders.charge")!;
    expect(charge.ready).toEqual({ checked: 2, refused: 1 });
    expect(charge.scheduled).toEqual({ checked: 1, refused: 1 });
    expect(charge.examples.map((e) => [e.id, e.state, e.issues[0]!.path])).toEqual([
      [noCard, "ready", "card"],
      [laterNoCard, "scheduled", "card"],
    ]);
    expect(report.tasks.find((t) => t.task === "orders.send")!.ready).toEqual({ checked: 1, refused: 0 });

    const table = await runJfast(["jobs", "check-payloads", "--task", "orders.charge", ...root]);
    expect(table.code).toBe(1);
    expect(table.stdout).toMatch(/^TASK\s+READY\s+REFUSED\s+SCHEDULED\s+REFUSED\s+FIRST REFUSED/);
    expect(table.stdout).toContain("2 waiting jobs would be refused by the current schema");
  });
});
