import pg from "pg";
import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import { dropSchema, openTestDatabase, uniqueSchema } from "./pg-test-env.js";

// A connection that dies while it is checked out — inside a transaction, the way a task session holds one
// while its handler runs, when the server restarts or an admin terminates it — must fail that transaction,
// not the process (an unhandled 'error' event on the pg client would). Vitest fails the run on such an error.
describe("postgres: a connection lost inside a transaction", () => {
  let database: DatabaseProvider | null = null;
  let schema = "";
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test" });
  afterEach(async () => {
    await database?.close();
    database = null;
    await dropSchema(schema);
    await admin.end().catch(() => undefined);
  });

  for (const path of ["drizzle transaction (task sessions)", "SQL port transaction (backends)"] as const) {
    it(`fails the ${path} with DATABASE_UNAVAILABLE and keeps working`, async () => {
      schema = uniqueSchema("connloss");
      database = await openTestDatabase({ schema });
      await admin.connect().catch(() => undefined);
      const db = database;
      const uncaught: unknown[] = [];
      const onUncaught = (error: unknown) => uncaught.push(error);
      process.on("uncaughtException", onUncaught);
      try {
        const killOwnBackend = async (pid: number) => {
          // Terminated between statements, while the transaction waits on application code: the moment
          // the pool has no listener of its own on the client.
          await admin.query("SELECT pg_terminate_backend($1)", [pid]);
          await new Promise((r) => setTimeout(r, 300));
        };
        const outcome =
          path === "drizzle transaction (task sessions)"
            ? db.transaction(async (tx: any) => {
                const { rows } = await tx.execute(sql`SELECT pg_backend_pid() AS pid`);
                await killOwnBackend(Number(rows[0].pid));
                await tx.execute(sql`SELECT 1`);
              })
            : db.sql.transaction(async (tx) => {
                const [row] = await tx.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
                await killOwnBackend(Number(row!.pid));
                await tx.query("SELECT 1");
              });
        await expect(outcome).rejects.toMatchObject({ code: "DATABASE_UNAVAILABLE" });
        expect(uncaught).toEqual([]);
        // The pool replaced the dead connection: the next transaction works.
        const [again] = await db.sql.transaction((tx) => tx.query<{ one: number }>("SELECT 1 AS one"));
        expect(again).toEqual({ one: 1 });
      } finally {
        process.off("uncaughtException", onUncaught);
      }
    });
  }
});
