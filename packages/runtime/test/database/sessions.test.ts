import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import knex, { type Knex } from "knex";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineTask } from "../../src/core/define-task.js";
import { toQuestionMarks } from "../../src/database/executor-for.js";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { dropSchema, PG_URL, silentLogger, uniqueSchema, withAdmin } from "../postgres/pg-test-env.js";

/**
 * The caller's transaction from the common Node PostgreSQL libraries (docs/outbox.md#your-transaction-from-any-library),
 * on the real PostgreSQL: each library's transaction object passed as it is to outbox.enqueue and outbox.flow —
 * committed, the jobs exist; rolled back, none; an object that is not a transaction refused with SESSION_INVALID
 * and nothing written.
 */
const send = defineTask("shop.send", async () => undefined);

describe("sessions from Node PostgreSQL libraries", () => {
  let jfast: Jfast;
  let schema: string;
  let dir: string;
  const closers: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    schema = uniqueSchema("sessions");
    dir = await mkdtemp(path.join(tmpdir(), "jfast-sessions-"));
    await writeFile(
      path.join(dir, "jfast.toml"),
      `[service]\nname = "sessions"\n[plugins]\nenabled = ["database", "queue", "outbox"]\n[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 2\n[plugin.queue]\nbackend = "postgres"\n`,
    );
    jfast = await createJfast({ root: dir, env: {}, logger: silentLogger, tasks: [send] });
    await jfast.start();
  });
  afterAll(async () => {
    for (const close of closers.splice(0)) await close();
    await jfast.stop();
    await dropSchema(schema);
    await rm(dir, { recursive: true, force: true });
  });

  /** The app's tables are in `schema`: every library's connection looks there first. */
  const url = () => `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const jobs = async (marker: string) =>
    withAdmin(async (c) => (await c.query(`SELECT count(*)::int AS n FROM "${schema}".jfast_jobs WHERE payload->>'marker' = $1`, [marker])).rows[0].n as number);

  /** Commit, rollback and a flow through `inTransaction`; `notATransaction` refused. */
  async function check(library: string, inTransaction: <T>(fn: (tx: unknown) => Promise<T>) => Promise<T>, notATransaction: unknown): Promise<void> {
    const outbox = jfast.require("outbox");
    const committed = `${library}-commit`;
    await inTransaction((tx) => outbox.enqueue(tx, [send.job({ marker: committed } as never), send.job({ marker: committed } as never)]));
    expect(await jobs(committed)).toBe(2);

    const rolledBack = `${library}-rollback`;
    const failure = await inTransaction(async (tx) => {
      await outbox.enqueue(tx, send.job({ marker: rolledBack } as never));
      throw new Error("rolled back on purpose");
    }).catch((e: Error) => e);
    expect(failure.message).toBe("rolled back on purpose");
    expect(await jobs(rolledBack)).toBe(0);

    const flowMarker = `${library}-flow`;
    const { flowId } = await inTransaction((tx) => outbox.flow(tx, { steps: { a: send.job({ marker: flowMarker } as never), b: { job: send.job({ marker: flowMarker } as never), after: ["a"] } } }));
    expect(await jobs(flowMarker)).toBe(2);
    expect((await jfast.require("queue").backend.getFlow({ id: flowId }))?.total).toBe(2);

    const outside = `${library}-outside`;
    await expect(outbox.enqueue(notATransaction, send.job({ marker: outside } as never))).rejects.toMatchObject({
      code: "SESSION_INVALID",
      message: expect.stringContaining("outbox#your-transaction-from-any-library"),
    });
    expect(await jobs(outside)).toBe(0);
  }

  it("node-postgres: a client inside BEGIN; a client without BEGIN is refused", async () => {
    const client = new pg.Client({ connectionString: url() });
    await client.connect();
    closers.push(() => client.end());
    const inTransaction = async <T>(fn: (tx: unknown) => Promise<T>): Promise<T> => {
      await client.query("BEGIN");
      try {
        const value = await fn(client);
        await client.query("COMMIT");
        return value;
      } catch (error) {
        await client.query("ROLLBACK");
        throw error;
      }
    };
    await check("pg", inTransaction, client);
  });

  it("Knex: the trx of knex.transaction; the knex instance is refused", async () => {
    const db: Knex = knex({ client: "pg", connection: url(), pool: { min: 0, max: 2 } });
    closers.push(() => db.destroy());
    await check("knex", (fn) => db.transaction((trx) => fn(trx)), db);
  });

  it("Kysely: the Transaction of db.transaction().execute; the Kysely instance is refused", async () => {
    const db = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url(), max: 2 }) }) });
    closers.push(() => db.destroy());
    await check("kysely", (fn) => db.transaction().execute((trx) => fn(trx)), db);
  });

  it("postgres.js: the sql of sql.begin; the top-level sql is refused", async () => {
    const sql = postgres(PG_URL, { max: 2, connection: { search_path: schema }, onnotice: () => undefined });
    closers.push(() => sql.end());
    await check("postgresjs", (fn) => sql.begin((tx) => fn(tx)) as unknown as Promise<never>, sql);
  });
});

describe("toQuestionMarks", () => {
  it("binds $n in order of appearance, escapes a ? of the statement, leaves literals and comments", () => {
    expect(toQuestionMarks("SELECT $2, $1, $2 WHERE a ? 'k' AND b = '$1?' -- $3 ?\n", ["x", "y"])).toEqual({
      text: "SELECT ?, ?, ? WHERE a \\? 'k' AND b = '$1\\?' -- $3 \\?\n",
      values: ["y", "x", "y"],
    });
    expect(() => toQuestionMarks("SELECT $3", [1])).toThrow(/refers to \$3/);
  });
});
