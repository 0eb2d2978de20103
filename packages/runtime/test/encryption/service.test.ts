import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { kidOf } from "../../src/core/crypto/envelope.js";
import { defineTask } from "../../src/core/define-task.js";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import type { Outbox } from "../../src/outbox/outbox.js";
import { dropSchema, eventually, PG_URL, silentLogger, uniqueSchema, withAdmin } from "../postgres/pg-test-env.js";
import { dropQueue, REDIS_URL, uniqueQueue } from "../redis/redis-test-env.js";

const key = (kid: string) => `${kid}:${randomBytes(32).toString("base64")}`;

/** Encryption at rest as a service meets it: its keys at start-up, and the outbox's two ways of writing a job. */
describe("encryption at rest in a service", () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function root(toml: string): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), "jfast-encryption-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(path.join(dir, "jfast.toml"), `[service]\nname = "billing"\n${toml}`);
    return dir;
  }

  const seen: string[] = [];
  const charge = defineTask<{ card: string }>("billing.charge", { encrypt: true }, async (payload) => void seen.push(payload.card));
  /** Spawns one charge step with its own card (docs/flows.md#adding-steps-while-it-runs). */
  const split = defineTask<{ card: string }>("billing.split", { encrypt: true }, async (payload, tools) => {
    tools.flow?.spawn({ one: charge.job({ card: payload.card }) });
  });

  it("a task with encrypt: true and no key stops start-up, naming how to make a key and the docs page", async () => {
    const dir = await root(`[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\n`);
    const failure = await (async () => {
      const jfast = await createJfast({ root: dir, tasks: [charge], env: {}, logger: silentLogger });
      cleanups.push(() => jfast.stop());
      await jfast.start();
    })().catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: "ENCRYPTION_KEY_MISSING", docs: "jfast docs security#encryption-at-rest" });
    expect((failure as { hint: string }).hint).toContain("randomBytes(32).toString('base64')");
    expect((failure as Error).message).toContain('"billing.charge"');
  });

  it("a malformed key stops start-up without echoing it", async () => {
    const dir = await root(`[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\n`);
    const failure = await createJfast({ root: dir, tasks: [charge], env: { JFAST_ENCRYPTION_KEYS: "k1:dG9vLXNob3J0" }, logger: silentLogger }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: "ENCRYPTION_KEY_INVALID" });
    expect((failure as Error).message).toContain('entry 1 ("k1")');
    expect((failure as Error).message).not.toContain("dG9vLXNob3J0");
  });

  async function service(queue: string): Promise<{ jfast: Jfast; schema: string; database: DatabaseProvider; outbox: Outbox }> {
    const schema = uniqueSchema("enc");
    cleanups.push(() => dropSchema(schema));
    const dir = await root(
      `[plugins]\nenabled = ["database", "queue", "outbox"]\n[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 2\n${queue}[plugin.outbox]\npoll_interval = 0.1\n`,
    );
    const jfast = await createJfast({ root: dir, tasks: [charge, split], env: { JFAST_ENCRYPTION_KEYS: key("k1") }, logger: silentLogger });
    cleanups.push(() => jfast.stop());
    await jfast.start();
    return { jfast, schema, database: jfast.require<DatabaseProvider>("database"), outbox: jfast.require<Outbox>("outbox") };
  }

  it("outbox.enqueue on the PostgreSQL queue writes the job row sealed in the caller's transaction", async () => {
    const { jfast, schema, database, outbox } = await service(`[plugin.queue]\nbackend = "postgres"\n`);
    const secret = `pan-${randomUUID()}`;
    const job = charge.job({ card: secret });
    await database.transaction((tx) => outbox.enqueue(tx, job));
    const rows = await withAdmin((c) => c.query(`SELECT payload::text AS payload FROM "${schema}".jfast_jobs WHERE id = $1`, [job.id]));
    expect(rows.rows).toHaveLength(1);
    expect(rows.rows[0].payload).not.toContain(secret);
    expect(kidOf(JSON.parse(rows.rows[0].payload))).toBe("k1");
    jfast.createWorker({ concurrency: 1 }).start();
    await eventually("the handler", async () => seen.includes(secret));
  });

  it("a flow's steps of an encrypted task are stored sealed (queue.flow, outbox.flow, a spawned step) and reach their handlers in clear", async () => {
    const { jfast, schema, database, outbox } = await service(`[plugin.queue]\nbackend = "postgres"\n`);
    const secret = `pan-${randomUUID()}`;
    const spawnedSecret = `spawned-${randomUUID()}`;
    const first = await jfast.require("queue").flow({ steps: { a: charge.job({ card: `${secret}-a` }), b: { job: charge.job({ card: `${secret}-b` }), after: ["a"] } } });
    const second = await database.transaction((tx) => outbox.flow(tx, { steps: { c: charge.job({ card: `${secret}-c` }) } }));
    const rows = await withAdmin((c) => c.query(`SELECT id, payload::text AS payload FROM "${schema}".jfast_jobs`));
    expect(rows.rows.map((r) => r.id).sort()).toEqual([first.jobIds.a, first.jobIds.b, second.jobIds.c].sort());
    for (const row of rows.rows) {
      expect(row.payload).not.toContain(secret);
      expect(kidOf(JSON.parse(row.payload))).toBe("k1");
    }
    jfast.createWorker({ concurrency: 1 }).start();
    await eventually("every step's handler", async () => ["a", "b", "c"].every((step) => seen.includes(`${secret}-${step}`)));
    // A step that spawns a step of an encrypted task: written sealed with its completion.
    const third = await jfast.require("queue").flow({ steps: { split: split.job({ card: spawnedSecret }) } });
    await eventually("the spawned step's handler", async () => seen.includes(spawnedSecret));
    const spawned = await withAdmin((c) => c.query(`SELECT payload::text AS payload FROM "${schema}".jfast_jobs WHERE flow_id = $1 AND id <> $2`, [third.flowId, third.jobIds.split]));
    expect(spawned.rows).toHaveLength(1);
    expect(spawned.rows[0].payload).not.toContain(spawnedSecret);
  });

  it("outbox.enqueue on another backend writes the jfast_outbox row sealed; the relayed job reaches the handler in clear", async () => {
    const queueName = uniqueQueue("encoutbox");
    cleanups.push(() => dropQueue(queueName));
    const { jfast, schema, database, outbox } = await service(`[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${queueName}"\n`);
    const secret = `pan-${randomUUID()}`;
    const job = charge.job({ card: secret });
    await database.transaction((tx) => outbox.enqueue(tx, job));
    const rows = await withAdmin((c) => c.query(`SELECT body::text AS body FROM "${schema}".jfast_outbox`));
    expect(rows.rows).toHaveLength(1);
    expect(rows.rows[0].body).toContain(job.id);
    expect(rows.rows[0].body).not.toContain(secret);
    jfast.createWorker({ concurrency: 1 }).start();
    await eventually("the relayed job's handler", async () => seen.includes(secret));
  });
});
