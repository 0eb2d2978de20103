import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { withRequest } from "../../src/context/context.js";
import { Job } from "../../src/core/job.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import { seen, startBillingApp, type BillingApp } from "./billing-app.js";
import { dropSchema, eventually, PG_HOST, PG_PORT, uniqueSchema, withAdmin } from "./pg-test-env.js";

/**
 * Row-level security with `rls = true`. Superusers (and table owners) bypass RLS, so the app connects as a
 * role made for the test: NOSUPERUSER NOBYPASSRLS, owning jfast's tables but not the tenant table.
 */
describe("postgres: row-level security", () => {
  let app: BillingApp | null = null;
  let role: string | null = null;
  let schema: string | null = null;

  afterEach(async () => {
    await app?.stop();
    app = null;
    // Dropped by app.stop(); also when the app never started.
    if (schema) await dropSchema(schema);
    schema = null;
    if (role) {
      const name = role;
      await withAdmin(async (c) => {
        await c.query(`DROP OWNED BY "${name}"`);
        await c.query(`DROP ROLE "${name}"`);
      });
      role = null;
    }
  });

  async function start(): Promise<BillingApp> {
    schema = uniqueSchema("rls");
    const name = `jfast_rls_${randomBytes(4).toString("hex")}`;
    role = name;
    await withAdmin((c) =>
      c.query(`
        CREATE ROLE "${name}" LOGIN NOSUPERUSER NOBYPASSRLS;
        CREATE SCHEMA "${schema}";
        GRANT USAGE, CREATE ON SCHEMA "${schema}" TO "${name}";
        CREATE TABLE "${schema}".rls_notes (tenant text NOT NULL, body text NOT NULL);
        INSERT INTO "${schema}".rls_notes VALUES
          ('acme', 'acme: invoice 1'), ('acme', 'acme: invoice 2'), ('globex', 'globex: invoice 1');
        ALTER TABLE "${schema}".rls_notes ENABLE ROW LEVEL SECURITY;
        CREATE POLICY tenant_rows ON "${schema}".rls_notes USING (tenant = current_setting('jfast.tenant_id', true));
        GRANT SELECT ON "${schema}".rls_notes TO "${name}";
      `),
    );
    app = await startBillingApp({ schema, rls: true, url: `postgres://${name}@${PG_HOST}:${PG_PORT}/test` });
    return app;
  }

  it("runs the app as a role that RLS applies to", async () => {
    const { jfast } = await start();
    const database = jfast.require<DatabaseProvider>("database");
    const [row] = await database.sql.query<{ rolsuper: boolean; rolbypassrls: boolean }>(
      "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user",
    );
    expect(row).toEqual({ rolsuper: false, rolbypassrls: false });
  });

  it("a TaskSession for tenant acme reads acme's rows and never globex's", async () => {
    const { jfast, worker } = await start();
    const queue = jfast.require<QueueProvider>("queue");
    const jobs = [
      new Job({ task: "billing.read_notes", tenantId: "acme" }),
      new Job({ task: "billing.read_notes", tenantId: "globex" }),
      new Job({ task: "billing.read_notes", tenantId: null }),
    ];
    await queue.enqueue(jobs);
    worker(1);
    await eventually("three sessions", async () => seen().notes.length >= 3);
    const byTenant = Object.fromEntries(seen().notes.splice(0).map((n) => [String(n.tenant), n.rows]));
    expect(byTenant).toEqual({
      acme: ["acme: invoice 1", "acme: invoice 2"],
      globex: ["globex: invoice 1"],
      // A job without a tenant sees nothing: the unset tenant matches no policy.
      null: [],
    });
  });

  it("database.transaction takes the tenant from the request, or from its options", async () => {
    const { jfast } = await start();
    const database = jfast.require<DatabaseProvider>("database");
    const read = (tx: unknown) =>
      database
        .executorFor(tx)
        .query<{ body: string }>("SELECT body FROM rls_notes ORDER BY body")
        .then((rows) => rows.map((r) => r.body));

    const fromRequest = await withRequest({ tenantId: "globex" }, () => database.transaction(read));
    expect(fromRequest).toEqual(["globex: invoice 1"]);
    const fromOptions = await withRequest({ tenantId: "globex" }, () => database.transaction(read, { tenantId: "acme" }));
    expect(fromOptions).toEqual(["acme: invoice 1", "acme: invoice 2"]);
    // Set per transaction (set_config(..., true)): nothing leaks to the pooled connection afterwards.
    const [after] = await database.sql.query<{ tenant: string | null }>("SELECT current_setting('jfast.tenant_id', true) AS tenant");
    expect(after?.tenant ?? "").toBe("");
  });
});
