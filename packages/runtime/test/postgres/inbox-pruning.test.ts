import { afterEach, describe, expect, it } from "vitest";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import { claimOnce } from "../../src/inbox/inbox.js";
import { dropSchema, eventually, openTestDatabase, uniqueSchema } from "./pg-test-env.js";

describe("postgres: inbox retention", () => {
  let database: DatabaseProvider | null = null;
  let schema = "";
  afterEach(async () => {
    await database?.close();
    database = null;
    await dropSchema(schema);
  });

  const keys = async () =>
    (await database!.sql.query<{ key: string }>("SELECT key FROM jfast_inbox ORDER BY key")).map((r) => r.key);

  it("prunes keys older than inbox_retention_days on its own, and keeps younger ones", async () => {
    schema = uniqueSchema("inbox");
    // Two seconds of retention (the setting is in days).
    database = await openTestDatabase({ schema, inboxRetentionDays: 2 / 86_400 });
    const db = database;
    await db.sql.transaction((tx) => claimOnce(tx, { consumer: "billing.send_receipt", key: "old" }));
    await db.sql.query("UPDATE jfast_inbox SET created_at = now() - interval '1 minute'");
    await db.sql.transaction((tx) => claimOnce(tx, { consumer: "billing.send_receipt", key: "fresh" }));
    expect(await keys()).toEqual(["fresh", "old"]);

    // No call from the test: the periodic pruner (every retention/4, at least 1 s) removes it.
    await eventually("the old key pruned", async () => !(await keys()).includes("old"), 15_000);
    expect(await keys()).toEqual(["fresh"]);

    // The fresh key goes once it is older than the retention too; pruneInbox() also runs on demand.
    await db.sql.query("UPDATE jfast_inbox SET created_at = now() - interval '3 seconds'");
    await db.pruneInbox();
    expect(await keys()).toEqual([]);
  });

  it("a pruned key is claimable again (why the retention must outlast redeliveries)", async () => {
    schema = uniqueSchema("inbox");
    database = await openTestDatabase({ schema, inboxRetentionDays: 2 / 86_400 });
    const db = database;
    expect(await db.sql.transaction((tx) => claimOnce(tx, { consumer: "c", key: "k" }))).toBe(true);
    expect(await db.sql.transaction((tx) => claimOnce(tx, { consumer: "c", key: "k" }))).toBe(false);
    await db.sql.query("UPDATE jfast_inbox SET created_at = now() - interval '1 minute'");
    await db.pruneInbox();
    expect(await db.sql.transaction((tx) => claimOnce(tx, { consumer: "c", key: "k" }))).toBe(true);
  });
});
