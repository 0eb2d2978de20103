import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, freePort, REPO_ROOT, runClean, runCleanOk, start, type Running } from "./support/processes.js";
import { PG_URL, REDIS_URL } from "./support/test-service.js";

// A service as a team outside this repository would write it: the packed tarballs of @jfast/runtime and
// @jfast/cli installed from a folder outside the workspace, next to the drivers it uses, from the npm
// registry. Type-checked against the installed .d.ts, then run with the installed binary on the real
// PostgreSQL, and then on Redis by changing jfast.toml only.

const id = randomBytes(4).toString("hex");
const SCHEMA = `e2e_pkg_${id}`;
const QUEUE = `e2e-pkg-${id}`;

/** The versions the workspace builds and tests with. */
const VERSIONS = { pg: "8.23.1", "drizzle-orm": "0.45.4", hono: "4.13.19", ioredis: "5.9.2", typescript: "5.9.3", tsx: "4.23.15" };

let work: string;
let service: string;

async function pack(dir: string): Promise<string> {
  const result = await runCleanOk("npm", ["pack", "--pack-destination", work, "--json"], path.join(REPO_ROOT, dir));
  const [{ filename }] = JSON.parse(result.stdout) as [{ filename: string }];
  return path.join(work, filename);
}

const FILES: Record<string, string> = {
  "tsconfig.json": JSON.stringify(
    {
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ["node"],
      },
      include: ["server.ts", "src", "modules"],
    },
    null,
    2,
  ),
  "src/schema.ts": `
import { pgTable, text, timestamp } from "drizzle-orm/pg-core";

export const notes = pgTable("notes", {
  id: text("id").primaryKey(),
  body: text("body").notNull(),
  summarizedBy: text("summarized_by"),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});
`,
  "modules/notes/tasks.ts": `
import { eq } from "drizzle-orm";
import { task } from "@jfast/runtime";
import { notes } from "../../src/schema.js";

export interface Summarize {
  note_id: string;
}

export const summarize = task<Summarize>("notes.summarize", { session: true }, async (payload, { session, job }) => {
  await session.update(notes).set({ summarizedBy: job.id }).where(eq(notes.id, payload.note_id));
});
`,
  "server.ts": `
import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { Job, type DatabaseProvider, type Jfast, type Outbox } from "@jfast/runtime";
import { notes } from "./src/schema.js";

export async function onStart(jfast: Jfast) {
  await jfast.require<DatabaseProvider>("database").sql.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('notes.create_tables'))");
    await tx.query(\`CREATE TABLE IF NOT EXISTS notes (
      id text PRIMARY KEY,
      body text NOT NULL,
      summarized_by text,
      created_at timestamptz NOT NULL DEFAULT now()
    )\`);
  });
}

export function createApp(jfast: Jfast) {
  const app = new Hono();
  app.use(jfast.middleware.hono());
  const database = () => jfast.require<DatabaseProvider>("database");

  app.post("/notes", async (c) => {
    const { body } = await c.req.json<{ body: string }>();
    const id = randomUUID();
    const job = await database().transaction(async (tx) => {
      await tx.insert(notes).values({ id, body });
      const job = new Job({ task: "notes.summarize", payload: { note_id: id } });
      await jfast.require<Outbox>("outbox").enqueue(tx, job);
      return job;
    });
    return c.json({ id, job_id: job.id }, 201);
  });

  app.get("/notes/:id", async (c) => {
    const [note] = await database().db.select().from(notes).where(eq(notes.id, c.req.param("id")));
    return note ? c.json(note) : c.json({ error: "no such note" }, 404);
  });
  return app;
}
`,
};

function jfastToml(queue: string, port: number): string {
  return `[service]
name = "notes"
base_port = ${port}

[plugins]
enabled = ["observability", "database", "queue", "outbox"]

[plugin.observability]
log_level = "info"

[plugin.database]
url = "${PG_URL}"
schema = "${SCHEMA}"

[plugin.queue]
name = "${QUEUE}"
${queue}
`;
}

/** The installed binary itself, as a supervisor runs it: SIGTERM goes straight to jfast. */
function jfastBin(args: string[], env: NodeJS.ProcessEnv = {}): Running {
  return start(path.join(service, "node_modules/.bin/jfast"), args, { cwd: service, env });
}

async function stopGracefully(processes: Running[]): Promise<void> {
  for (const p of processes) p.child.kill("SIGTERM");
  const exits = await Promise.all(processes.map((p) => p.exited));
  for (const exit of exits) {
    expect(exit.code, exit.stdout + exit.stderr).toBe(0);
    expect(exit.stdout + exit.stderr).toContain('"msg":"stopped"');
  }
}

/** API (`jfast start`) and worker (`jfast worker`) as two processes; a note posted to the route gets summarized by the job. */
async function enqueueThroughTheRoute(): Promise<void> {
  const port = await freePort();
  const api = jfastBin(["start"], { PORT: String(port) });
  const worker = jfastBin(["worker", "--concurrency", "2"]);
  try {
    await api.waitFor("http listening", 120_000);
    await worker.waitFor("worker started", 120_000);
    const response = await fetch(`http://127.0.0.1:${port}/notes`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ body: "call the bank" }),
    });
    expect(response.status).toBe(201);
    const created = (await response.json()) as { id: string; job_id: string };
    const note = await eventually(
      async () => {
        const read = (await (await fetch(`http://127.0.0.1:${port}/notes/${created.id}`)).json()) as { summarizedBy: string | null };
        return read.summarizedBy ? read : undefined;
      },
      { what: "the job to summarize the note", timeoutMs: 60_000 },
    );
    expect(note.summarizedBy).toBe(created.job_id);
    await stopGracefully([api, worker]);
  } finally {
    for (const p of [api, worker]) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
  }
}

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), "jfast-installed-"));
  service = path.join(work, "notes");
  const [runtime, cli] = await Promise.all([pack("packages/runtime"), pack("packages/cli")]);
  await mkdir(path.join(service, "modules/notes"), { recursive: true });
  await mkdir(path.join(service, "src"), { recursive: true });
  await writeFile(
    path.join(service, "package.json"),
    JSON.stringify(
      {
        name: "notes",
        private: true,
        type: "module",
        dependencies: {
          "@jfast/cli": `file:${cli}`,
          "@jfast/runtime": `file:${runtime}`,
          "drizzle-orm": VERSIONS["drizzle-orm"],
          hono: VERSIONS.hono,
          pg: VERSIONS.pg,
          // This service runs its .ts files in production: tsx, an optional peer of the CLI, is its dependency.
          tsx: VERSIONS.tsx,
        },
        devDependencies: { "@types/node": "^20.11.0", typescript: VERSIONS.typescript },
      },
      null,
      2,
    ),
  );
  for (const [file, text] of Object.entries(FILES)) await writeFile(path.join(service, file), text);
  await writeFile(path.join(service, "jfast.toml"), jfastToml('backend = "postgres"', 8700));
  await runCleanOk("npm", ["install", "--no-audit", "--no-fund"], service);
}, 600_000);

afterAll(async () => {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`).finally(() => client.end());
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`*${QUEUE}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
  if (work) await rm(work, { recursive: true, force: true });
});

describe("the published packages, installed into a service outside the workspace", () => {
  it("install only the drivers the service uses, and no test files", async () => {
    const modules = await readdir(path.join(service, "node_modules"));
    for (const driver of ["ioredis", "amqplib", "kafkajs"]) expect(modules, driver).not.toContain(driver);
    expect(existsSync(path.join(service, "node_modules/@electric-sql/pglite"))).toBe(false);
    expect(existsSync(path.join(service, "node_modules/@opentelemetry/sdk-trace-base"))).toBe(false);
    const runtime = path.join(service, "node_modules/@jfast/runtime");
    expect(existsSync(path.join(runtime, "src"))).toBe(false);
    expect(existsSync(path.join(runtime, "LICENSE"))).toBe(true);
    expect(existsSync(path.join(runtime, "docs/getting-started.md"))).toBe(true);
    const shipped = await readdir(runtime, { recursive: true });
    expect(shipped.filter((file) => /\.test\.|(^|\/)test\//.test(file))).toEqual([]);
  });

  it("type-checks against the installed declarations", async () => {
    const result = await runClean(path.join(service, "node_modules/.bin/tsc"), ["-p", "."], service);
    expect(result.stdout + result.stderr).toBe("");
    expect(result.code).toBe(0);
  });

  it("jfast docs prints the pages the hints name, from the installed package", async () => {
    const result = await runClean(path.join(service, "node_modules/.bin/jfast"), ["docs", "getting-started#drivers"], service);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^## Drivers/);
    expect(result.stderr).toContain(path.join("node_modules", "@jfast", "runtime", "docs", "getting-started.md"));
  });

  it("on PostgreSQL: jfast start and jfast worker run a job enqueued in the route's transaction, and stop on SIGTERM", async () => {
    await enqueueThroughTheRoute();
  });

  it("on Redis by configuration only: a missing driver names its install command; once installed, the same code runs", async () => {
    await writeFile(path.join(service, "jfast.toml"), jfastToml(`backend = "redis"\nurl = "${REDIS_URL}"`, 8700));
    const missing = await runClean(path.join(service, "node_modules/.bin/jfast"), ["worker"], service);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('the package "ioredis" is not installed');
    expect(missing.stderr).toContain("fix: npm install ioredis");
    expect(missing.stderr).toContain("see: jfast docs getting-started#drivers");

    await runCleanOk("npm", ["install", "--no-audit", "--no-fund", `ioredis@${VERSIONS.ioredis}`], service);
    await enqueueThroughTheRoute();
  });
});
