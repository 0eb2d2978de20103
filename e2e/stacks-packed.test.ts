import { randomBytes } from "node:crypto";
import { cp, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, REPO_ROOT, runClean, runCleanOk, start } from "./support/processes.js";
import { PG_URL } from "./support/test-service.js";

// apps/stacks/<framework> as a team outside this repository runs them: the packed @jfast/runtime and @jfast/cli
// installed once in a folder of their own with every stack's framework (one npm install keeps CI short), each
// stack compiled with `jfast build` and served by `jfast start --root dist`: its route, /ready beside it, a job
// enqueued in a request with that request's tenant, and a job enqueued inside the transaction of the stack's own
// PostgreSQL library (Knex, Kysely, node-postgres, postgres.js, drizzle): there after a commit, absent after a
// rollback. The stacks share one throwaway database (the first to start migrates it).

const STACKS = path.join(REPO_ROOT, "apps", "stacks");
let work: string;
let frameworks: string[];
const DATABASE = `e2e_stacks_${randomBytes(4).toString("hex")}`;
const DATABASE_URL = `${PG_URL.slice(0, PG_URL.lastIndexOf("/"))}/${DATABASE}`;

async function admin<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** The jobs of orders.charge for this order id in the stacks' database. */
async function jobsOf(orderId: string): Promise<string[]> {
  const { rows } = await admin(DATABASE_URL, (c) => c.query<{ id: string }>("SELECT id FROM jfast_jobs WHERE task = 'orders.charge' AND payload->>'order_id' = $1", [orderId]));
  return rows.map((r) => r.id);
}

async function pack(dir: string): Promise<string> {
  const result = await runCleanOk("npm", ["pack", "--pack-destination", work, "--json"], path.join(REPO_ROOT, dir));
  const [{ filename }] = JSON.parse(result.stdout.slice(result.stdout.indexOf("["))) as [{ filename: string }];
  return path.join(work, filename);
}

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), "jfast-stacks-"));
  frameworks = (await readdir(STACKS, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name).sort();
  const dependencies: Record<string, string> = {};
  // What compiling them needs (jfast build): TypeScript, the types Express and Koa do not ship, and each stack's own.
  const devDependencies: Record<string, string> = { typescript: "5.9.3", "@types/node": "^20.11.0", "@types/express": "5.0.6", "@types/koa": "3.0.3" };
  for (const framework of frameworks) {
    await cp(path.join(STACKS, framework), path.join(work, framework), { recursive: true, filter: (source) => !/node_modules|[/\\]dist$/.test(source) });
    const manifest = (await import(path.join(STACKS, framework, "package.json"), { with: { type: "json" } })).default as { dependencies: Record<string, string>; devDependencies?: Record<string, string> };
    for (const [name, version] of Object.entries(manifest.dependencies)) if (!name.startsWith("@jfast/")) dependencies[name] = version;
    Object.assign(devDependencies, manifest.devDependencies);
  }
  const [runtime, cli] = [await pack("packages/runtime"), await pack("packages/cli")];
  await writeFile(
    path.join(work, "package.json"),
    JSON.stringify({
      name: "stacks",
      private: true,
      type: "module",
      dependencies: { ...dependencies, "@jfast/runtime": `file:${runtime}`, "@jfast/cli": `file:${cli}` },
      devDependencies,
      overrides: { "@jfast/runtime": `file:${runtime}` },
    }),
  );
  await runCleanOk("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts"], work);
  await admin(PG_URL, (c) => c.query(`CREATE DATABASE "${DATABASE}"`));
}, 600_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
  await admin(PG_URL, (c) => c.query(`DROP DATABASE IF EXISTS "${DATABASE}" WITH (FORCE)`));
});

describe("apps/stacks from the packed packages", () => {
  it("has the stacks the docs name", () => {
    expect(frameworks).toEqual(["express", "fastify", "hono", "koa", "nest"]);
  });

  for (const [framework, library] of [
    ["express", "Knex"],
    ["fastify", "Kysely"],
    ["hono", "drizzle on pg"],
    ["koa", "node-postgres"],
    ["nest", "postgres.js"],
  ] as const) {
    it(`${framework}: jfast build, then jfast start --root dist serves the route, /ready, an enqueue with the request's tenant, and one in a ${library} transaction kept on commit and gone on rollback`, async () => {
      const root = path.join(work, framework);
      const jfast = path.join(work, "node_modules", ".bin", "jfast");
      const built = await runClean(jfast, ["build"], root);
      expect(built.code, built.stderr).toBe(0);
      const port = await freePort();
      const app = start(jfast, ["start", "--root", "dist", "--grace", "2"], { cwd: root, env: { PORT: String(port), HOST: "127.0.0.1", JFAST_ENV: "development", DATABASE_URL } });
      try {
        await app.waitFor('"msg":"http listening"', 60_000);
        const base = `http://127.0.0.1:${port}`;
        expect(await (await fetch(`${base}/hello`)).json()).toEqual({ hello: framework });
        expect((await fetch(`${base}/ready`)).status).toBe(200);
        const charged = await fetch(`${base}/orders/42/charge`, { method: "POST", headers: { "x-tenant-id": "acme", "content-type": "application/json" }, body: "{}" });
        expect(charged.status, app.output).toBe(202);
        expect(await charged.json()).toMatchObject({ tenant_id: "acme" });

        const kept = `${framework}-commit-${randomBytes(4).toString("hex")}`;
        const placed = await fetch(`${base}/orders/${kept}/place`, { method: "POST" });
        expect(placed.status, app.output).toBe(201);
        expect(await jobsOf(kept)).toEqual([((await placed.json()) as { job_id: string }).job_id]);

        const rolledBack = `${framework}-rollback-${randomBytes(4).toString("hex")}`;
        const failed = await fetch(`${base}/orders/${rolledBack}/place?fail=1`, { method: "POST" });
        expect(failed.status, app.output).toBe(500);
        expect(await jobsOf(rolledBack)).toEqual([]);
        // The framework's own error answer, and jfast's log line of the failure with its request id.
        await app.waitFor(`failed after the enqueue`, 10_000);
      } finally {
        app.child.kill("SIGTERM");
        expect((await app.exited).code, app.output).toBe(0);
      }
    });
  }
});
