import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, REPO_ROOT, runCleanOk, start } from "./support/processes.js";
import { PG_URL } from "./support/test-service.js";

// The production install of a PostgreSQL service on Express from the packed packages (npm pack, then npm ci
// --omit=dev in a folder outside the workspace): its size, no build-time package in it, and the compiled service
// running there — jfast start, and a job written in the caller's transaction without drizzle-orm (commit keeps
// it, rollback leaves nothing). docs/getting-started.md#production-install-size

const LIMIT_MB = 45;
const id = randomBytes(4).toString("hex");
const SCHEMA = `e2e_lean_${id}`;
let work: string;
let service: string;

async function pack(dir: string): Promise<string> {
  const result = await runCleanOk("npm", ["pack", "--pack-destination", work, "--json"], path.join(REPO_ROOT, dir));
  const [{ filename }] = JSON.parse(result.stdout.slice(result.stdout.indexOf("["))) as [{ filename: string }];
  return path.join(work, filename);
}

const SERVER = `import express from "express";
import { Job } from "@jfast/runtime";

export function createApp(jfast) {
  const app = express();
  app.use(express.json(), jfast.middleware.express());
  app.post("/orders/:id", async (req, res) => {
    const database = jfast.require("database");
    const outbox = jfast.require("outbox");
    try {
      await database.transaction(async (tx) => {
        await tx.query("select 1");
        await outbox.enqueue(tx, new Job({ task: "orders.charge", payload: { order: req.params.id } }));
        if (req.body.fail) throw new Error("the order failed after the enqueue");
      });
      res.status(202).json({ committed: true });
    } catch (error) {
      res.status(409).json({ committed: false, error: error.message });
    }
  });
  return app;
}
`;

describe("the production install of a PostgreSQL service", () => {
  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), "jfast-lean-"));
    service = path.join(work, "service");
    await mkdir(path.join(service, "modules", "orders"), { recursive: true });
    const [runtime, cli] = [await pack("packages/runtime"), await pack("packages/cli")];
    await writeFile(
      path.join(service, "package.json"),
      JSON.stringify({ name: "lean-service", private: true, type: "module", dependencies: { "@jfast/runtime": `file:${runtime}`, "@jfast/cli": `file:${cli}`, pg: "8.23.1", express: "5.3.0" }, overrides: { "@jfast/runtime": `file:${runtime}` } }),
    );
    await writeFile(path.join(service, "jfast.toml"), `[service]\nname = "lean"\nbase_port = 1\n[plugins]\nenabled = ["database", "queue", "outbox"]\n[plugin.database]\nurl = "${PG_URL}"\nschema = "${SCHEMA}"\n[plugin.queue]\nbackend = "postgres"\n`);
    // What jfast build leaves: JavaScript (the build itself is tested in packages/cli/test/build.test.ts).
    await writeFile(path.join(service, "server.js"), SERVER);
    await writeFile(path.join(service, "modules", "orders", "tasks.js"), `import { task } from "@jfast/runtime";\nexport const charge = task("orders.charge", async () => undefined);\n`);
    await runCleanOk("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--package-lock-only"], service);
    await runCleanOk("npm", ["ci", "--omit=dev", "--no-audit", "--no-fund", "--ignore-scripts"], service);
  }, 600_000);

  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
    await client.end();
  });

  it(`is under ${LIMIT_MB} MB, without TypeScript, tsx, esbuild or drizzle-orm`, async () => {
    const du = await runCleanOk("du", ["-sk", "node_modules"], service);
    const megabytes = Number(du.stdout.split("\t")[0]) / 1024;
    expect(megabytes).toBeLessThan(LIMIT_MB);
    for (const absent of ["typescript", "tsx", "esbuild", "@esbuild", "drizzle-orm", "@trpc/server"]) expect(existsSync(path.join(service, "node_modules", absent)), absent).toBe(false);
  });

  it("runs the compiled service with jfast start: a job written in the caller's transaction on commit, nothing on rollback", async () => {
    const port = await freePort();
    const app = start(path.join(service, "node_modules", ".bin", "jfast"), ["start"], { cwd: service, env: { PORT: String(port), HOST: "127.0.0.1", JFAST_ENV: "development", JFAST_ADMIN_TOKENS: "ops:viewer:a-viewer-token-for-the-lean-install" } });
    try {
      await app.waitFor('"msg":"http listening"', 60_000);
      const base = `http://127.0.0.1:${port}`;
      expect((await fetch(`${base}/ready`)).status).toBe(200);
      // Without TypeScript the sources are not parsed: the contracts view shows what the registry reveals, no violation.
      const contracts = await fetch(`${base}/jfast/admin/contracts.graph`, { headers: { authorization: "Bearer a-viewer-token-for-the-lean-install" } });
      expect(contracts.status).toBe(200);
      expect(((await contracts.json()) as { result: { data: { violations: unknown[] } } }).result.data.violations).toEqual([]);
      const committed = await fetch(`${base}/orders/1`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect(await committed.json()).toEqual({ committed: true });
      const rolledBack = await fetch(`${base}/orders/2`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ fail: true }) });
      expect(await rolledBack.json()).toEqual({ committed: false, error: "the order failed after the enqueue" });
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      try {
        // On PostgreSQL the job goes straight into the queue's table; through the outbox table on other queues.
        const { rows } = await client.query(
          `SELECT payload FROM "${SCHEMA}".jfast_jobs WHERE task = 'orders.charge' UNION ALL SELECT body->'payload' FROM "${SCHEMA}".jfast_outbox WHERE kind = 'job'`,
        );
        expect(rows.map((r) => r.payload)).toEqual([{ order: "1" }]);
      } finally {
        await client.end();
      }
    } finally {
      app.child.kill("SIGTERM");
      await app.exited;
    }
  });
});
