import { randomBytes } from "node:crypto";
import { mkdtemp, mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import amqp from "amqplib";
import { Redis } from "ioredis";
import pg from "pg";
import { jfast, REPO_ROOT, startJfast, type Exit, type Running } from "./processes.js";

export const PG_URL = "postgres://postgres@127.0.0.1:5432/test";
export const REDIS_URL = "redis://127.0.0.1:6379";
export const AMQP_URL = "amqp://guest:guest@127.0.0.1:5672";

export type Backend = "postgres" | "redis" | "rabbitmq";

/**
 * The tasks of the throwaway service. Each appends what it saw to events.log beside jfast.toml, so a test
 * can tell which process ran which attempt of which job without reaching into the queue's tables.
 */
const TASKS = `
import { appendFileSync } from "node:fs";
import { currentTenantId, task } from "@jfast/runtime";

const LOG = new URL("../../events.log", import.meta.url);
function record(event: string, job: { id: string; task: string; attempts: number }) {
  appendFileSync(LOG, JSON.stringify({ event, id: job.id, task: job.task, attempt: job.attempts, pid: process.pid, tenant: currentTenantId() }) + "\\n");
}

export const short = task("e2e.short", async (payload: { ms: number }, { job }) => {
  record("start", job);
  await new Promise((r) => setTimeout(r, payload.ms));
  record("done", job);
});

export const long = task("e2e.long", async (_payload, { job }) => {
  record("start", job);
  // Ignores its abort signal on purpose: only the worker's release can take it back.
  await new Promise((r) => setTimeout(r, 600_000));
  record("done", job);
});

export const pill = task("e2e.pill", async (_payload, { job }) => {
  record("start", job);
  process.kill(process.pid, "SIGKILL");
  await new Promise((r) => setTimeout(r, 60_000));
});

class CardDeclined extends Error {
  name = "CardDeclined";
}
export const charge = task("e2e.charge", async (payload: { card: string }, { job }) => {
  record("start", job);
  throw new CardDeclined("card " + payload.card + " declined");
});
`;

export interface JfastEvent {
  event: "start" | "done";
  id: string;
  task: string;
  attempt: number;
  pid: number;
  tenant: string | null;
}

export interface TestService {
  backend: Backend;
  root: string;
  schema: string;
  /** `jfast <args> --root <root>` to completion. */
  jfast(args: string[]): Promise<Exit>;
  /** A `jfast worker` on this service; resolves once it logged its start. */
  worker(args?: string[]): Promise<Running>;
  enqueue(task: string, flags?: string[]): Promise<string>;
  /** `jfast jobs dead --json`. */
  dead(): Promise<{ job: { id: string; attempts: number; errors: { class: string; message: string }[] }; diedAt: string; lastError: { class: string; message: string; reason?: string } }[]>;
  /** `jfast jobs show <id> --json`. */
  show(id: string): Promise<{ state: string; job: { attempts: number; errors: { class: string; message: string; reason?: string }[] } }>;
  events(): Promise<JfastEvent[]>;
  remove(): Promise<void>;
}

/**
 * A throwaway service on a real backend, isolated by its own namespace: a PostgreSQL schema, or a queue name
 * that prefixes every Redis key and RabbitMQ queue it creates. `remove()` deletes all of it.
 */
export async function createTestService(
  params: { backend?: Backend; visibilityTimeout?: number; maxAttempts?: number } = {},
): Promise<TestService> {
  const backend = params.backend ?? "postgres";
  const schema = `e2e_${randomBytes(5).toString("hex")}`;
  const root = await mkdtemp(path.join(tmpdir(), "jfast-e2e-"));
  await symlink(path.join(REPO_ROOT, "node_modules"), path.join(root, "node_modules"), "dir");
  await writeFile(path.join(root, "package.json"), JSON.stringify({ name: "e2e-service", private: true, type: "module" }));
  await writeFile(
    path.join(root, "jfast.toml"),
    `[service]
name = "e2e"

[plugins]
enabled = [${backend === "postgres" ? '"database", ' : ""}"queue"]
${backend === "postgres" ? `\n[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n` : ""}
[plugin.queue]
backend = "${backend}"
${backend === "redis" ? `url = "${REDIS_URL}"\n` : backend === "rabbitmq" ? `url = "${AMQP_URL}"\n` : ""}name = "${schema}"
max_attempts = ${params.maxAttempts ?? 3}
visibility_timeout = ${params.visibilityTimeout ?? 2}
poll_interval = 0.5
backoff_base = 0.2
`,
  );
  await mkdir(path.join(root, "modules/e2e"), { recursive: true });
  await writeFile(path.join(root, "modules/e2e/tasks.ts"), TASKS);
  const workers: Running[] = [];
  const env = { DATABASE_URL: "" };

  const service: TestService = {
    backend,
    root,
    schema,
    jfast: (args) => jfast([...args, "--root", root], { env }),
    async worker(args = []) {
      const running = startJfast(["worker", "--root", root, ...args], { env });
      workers.push(running);
      await running.waitFor('"msg":"worker started"');
      return running;
    },
    async enqueue(task, flags = []) {
      const result = await service.jfast(["jobs", "enqueue", task, ...flags]);
      if (result.code !== 0) throw new Error(`jfast jobs enqueue failed: ${result.stderr}`);
      return result.stdout.trim();
    },
    async dead() {
      const result = await service.jfast(["jobs", "dead", "--json", "--limit", "1000"]);
      if (result.code !== 0) throw new Error(`jfast jobs dead failed: ${result.stderr}`);
      return JSON.parse(result.stdout);
    },
    async show(id) {
      const result = await service.jfast(["jobs", "show", id, "--json"]);
      if (result.code !== 0) throw new Error(`jfast jobs show failed: ${result.stderr}`);
      return JSON.parse(result.stdout);
    },
    async events() {
      const text = await readFile(path.join(root, "events.log"), "utf8").catch(() => "");
      return text.split("\n").filter(Boolean).map((line) => JSON.parse(line) as JfastEvent);
    },
    async remove() {
      for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGKILL");
      await Promise.all(workers.map((w) => w.exited));
      await rm(root, { recursive: true, force: true });
      await dropNamespace(backend, schema);
    },
  };
  return service;
}

/** Deletes everything the service created on its backend: the schema, the queue's keys, the broker's queues. */
async function dropNamespace(backend: Backend, name: string): Promise<void> {
  if (backend === "postgres") {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
    } finally {
      await client.end();
    }
  } else if (backend === "redis") {
    const redis = new Redis(REDIS_URL);
    try {
      const keys = await redis.keys(`*{${name}}*`);
      if (keys.length > 0) await redis.del(...keys);
    } finally {
      redis.disconnect();
    }
  } else {
    const connection = await amqp.connect(AMQP_URL);
    try {
      const channel = await connection.createChannel();
      const names = [name, `${name}.dead`, ...Array.from({ length: 25 }, (_, i) => `${name}.delay.${i}`)];
      for (const queue of names) await channel.deleteQueue(queue);
      for (const exchange of names) await channel.deleteExchange(exchange);
      await channel.close();
    } finally {
      await connection.close();
    }
  }
}
