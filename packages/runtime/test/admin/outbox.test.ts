import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { Job } from "../../src/core/job.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import { outboxChannel } from "../../src/outbox/channel.js";
import { OutboxKind, writeOutboxRows } from "../../src/outbox/outbox-rows.js";
import { dropSchema, PG_URL, silentLogger, uniqueSchema, withAdmin } from "../postgres/pg-test-env.js";
import { OPERATOR, VIEWER, call, eventually } from "./admin-harness.js";

/** Dead outbox rows through the admin API, as the dashboard's outbox page reads and repairs them. */
describe("admin API: dead outbox rows", () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function start(): Promise<{ jfast: Jfast; schema: string }> {
    const schema = uniqueSchema("adminob");
    cleanups.push(() => dropSchema(schema));
    const root = await mkdtemp(path.join(tmpdir(), "jfast-admin-outbox-"));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await writeFile(
      path.join(root, "jfast.toml"),
      `[service]\nname = "billing"\n[plugins]\nenabled = ["database", "queue", "outbox"]\n[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 2\n[plugin.queue]\nbackend = "memory"\n[plugin.outbox]\npoll_interval = 0.1\n`,
    );
    const jfast = await createJfast({ root, env: { JFAST_ADMIN_TOKENS: `viewer:${VIEWER},alice:operator:${OPERATOR}` }, logger: silentLogger });
    await jfast.start();
    cleanups.push(() => jfast.stop());
    return { jfast, schema };
  }

  /** A job row for a queue this service does not have (written by a process configured otherwise): it dies at once. */
  async function deadRow(jfast: Jfast, schema: string): Promise<string> {
    const database = jfast.require<DatabaseProvider>("database");
    const job = new Job({ task: "mail.send", payload: { to: "ap@acme.test", api_key: "sk_live_123456" } });
    await database.transaction((tx) =>
      writeOutboxRows({
        executor: database.executorFor(tx),
        rows: [{ kind: OutboxKind.job, destination: "other.jobs", id: job.id, body: job.toJSON() }],
        maxAttempts: 10,
        channel: outboxChannel(schema),
      }),
    );
    const id = `job:other.jobs:${job.id}`;
    await eventually("the row to die", async () => {
      const rows = await withAdmin((c) => c.query(`SELECT state FROM "${schema}".jfast_outbox WHERE id = $1`, [id]));
      return rows.rows[0]?.state === "dead";
    });
    return id;
  }

  it("lists dead rows with their errors and a redacted body, retries and discards them as an operator, audited", async () => {
    const { jfast, schema } = await start();
    const id = await deadRow(jfast, schema);

    const dead = await call(jfast, "outbox.dead", { token: VIEWER });
    expect(dead.status).toBe(200);
    expect(dead.data.rows).toHaveLength(1);
    const [row] = dead.data.rows;
    expect(row).toMatchObject({ id, kind: "job", destination: "other.jobs", attempts: 1, lastError: { reason: "undeliverable" } });
    expect(row.body.payload).toEqual({ to: "ap@acme.test", api_key: "[redacted]" });

    expect((await call(jfast, "outbox.retry", { token: VIEWER, input: { ids: [id] }, mutation: true })).status).toBe(403);
    const retried = await call(jfast, "outbox.retry", { token: OPERATOR, input: { ids: [id, "job:x:missing"] }, mutation: true });
    expect(retried.status).toBe(200);
    expect(retried.data).toEqual({ retried: [id], missing: ["job:x:missing"] });
    // Still undeliverable here: the relay sends it again and it dies again, with a second error.
    await eventually("the retried row to die again", async () => {
      const again = await call(jfast, "outbox.dead", { token: VIEWER });
      return again.data.rows[0]?.errors.length === 2;
    });

    const discarded = await call(jfast, "outbox.discard", { token: OPERATOR, input: { ids: [id] }, mutation: true });
    expect(discarded.data).toEqual({ discarded: [id], missing: [] });
    expect((await call(jfast, "outbox.dead", { token: VIEWER })).data.rows).toEqual([]);
    const audit = (await call(jfast, "audit.list", { token: VIEWER })).data.entries as Array<{ action: string; actor: string; outcome: Record<string, unknown> }>;
    expect(audit.map((e) => [e.action, e.actor, e.outcome])).toEqual([
      ["outbox.discard", "alice", { discarded: 1, missing: 0 }],
      ["outbox.retry", "alice", { retried: 1, missing: 1 }],
    ]);
  });

  it("redacts a dead row's delivery errors too: the secret of its body, escaped or not, and any hidden pair", async () => {
    const { jfast, schema } = await start();
    const id = await deadRow(jfast, schema);
    // A broker's refusal quoting what it was sent, as an error of a real delivery would.
    const quoted = JSON.stringify({ to: "ap@acme.test", api_key: "sk_live_123456" });
    const error = { attempt: 1, at: new Date().toISOString(), class: "BrokerError", message: `refused ${JSON.stringify(quoted)}: ${quoted}`, stack: `BrokerError: sk_live_123456\n    at send`, reason: "undeliverable" };
    await withAdmin((c) => c.query(`UPDATE "${schema}".jfast_outbox SET errors = $2::jsonb WHERE id = $1`, [id, JSON.stringify([error])]));
    const [row] = (await call(jfast, "outbox.dead", { token: VIEWER })).data.rows;
    expect(JSON.stringify(row)).not.toContain("sk_live");
    expect(row.errors[0].message).toContain("refused");
    expect(row.errors[0].message).toContain("ap@acme.test");
    expect(row.lastError.stack).toBe("BrokerError: [redacted]\n    at send");
  });
});
