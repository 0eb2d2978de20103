import { randomUUID } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createJfast, type DatabaseProvider, type Jfast, type Logger } from "@jfast/runtime";
import { createApp, onStart, providers } from "../server.js";

const ROOT = path.resolve(fileURLToPath(import.meta.url), "../..");
const PG_URL = "postgres://postgres@127.0.0.1:5432/test";

describe("the billing service's HTTP errors", () => {
  let jfast: Jfast | null = null;
  let schema = "";
  afterEach(async () => {
    if (!jfast) return;
    await jfast.require<DatabaseProvider>("database").sql.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await jfast.stop();
    jfast = null;
  });

  it("logs an error that answers 500, with the request it failed", async () => {
    schema = `example_errors_${randomUUID().slice(0, 8)}`;
    const errors: Array<{ message: string; fields: Record<string, unknown> }> = [];
    const logger: Logger = { debug() {}, info() {}, warn() {}, error: (message, fields = {}) => void errors.push({ message, fields }) };
    jfast = await createJfast({
      root: ROOT,
      env: { JFAST_DISABLE_PLUGINS: "kafka" },
      config: { plugin: { database: { url: PG_URL, schema, pool_size: 2 } } },
      providers: providers(),
      logger,
    });
    await jfast.start();
    await onStart(jfast);
    const app = createApp(jfast);

    // amount_cents is an integer column: 10^12 passes the route's check and fails in PostgreSQL.
    const response = await app.fetch(
      new Request("http://billing/invoices", {
        method: "POST",
        headers: { "x-tenant-id": "acme", "content-type": "application/json" },
        body: JSON.stringify({ customer_email: "ap@acme.test", amount_cents: 1_000_000_000_000 }),
      }),
    );
    expect(response.status).toBe(500);
    expect(await response.text()).toBe("Internal Server Error");
    const logged = errors.find((e) => e.message === "request failed");
    expect(logged?.fields).toMatchObject({ method: "POST", path: "/invoices" });
    expect((logged?.fields.error as Error).message).toMatch(/insert into "invoices"/);
  });
});
