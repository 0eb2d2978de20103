import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { Redis } from "ioredis";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import type { EventHandlerDefinition } from "../../src/kafka/on.js";
import { createLogger } from "../../src/observability/logger.js";
import type { Outbox } from "../../src/outbox/outbox.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import type { AppWorker as Worker } from "../../src/worker/worker-group.js";
import { copyFixture, sleep, withAdmin, PG_URL } from "../postgres/pg-test-env.js";

export interface Run {
  handler: string;
  subject: string;
  jobId: string | null;
}

/** Handler runs recorded by the outbox-relay fixture's tasks (same process, shared through globalThis). */
export function runs(): Run[] {
  return ((globalThis as Record<string, unknown>).__jfastOutboxRuns ??= []) as Run[];
}

export interface ShopApp {
  jfast: Jfast;
  database: DatabaseProvider;
  outbox: Outbox;
  queue: QueueProvider;
  backend: QueueBackend;
  logs: Record<string, unknown>[];
  ready(): Promise<{ status: string; checks: Record<string, Record<string, unknown>> }>;
  worker(concurrency?: number): Worker;
  registerReceipt(session: unknown, data: { receipt_id: string }): Promise<{ event: import("../../src/core/event.js").Event; result: { inserted: string[] } }>;
}

/**
 * Builds and starts the outbox-relay fixture (test/fixtures/outbox-relay) on the real PostgreSQL in
 * `schema`, with `queue` and `outbox` set on top of its jfast.toml. Log lines are captured.
 */
export async function startShop(params: {
  root: string;
  schema: string;
  queue: Record<string, unknown>;
  outbox?: Record<string, unknown>;
  plugins?: string[];
  kafka?: Record<string, unknown>;
  handlers?: EventHandlerDefinition[];
  backend?: QueueBackend;
  name?: string;
}): Promise<ShopApp> {
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({ service: params.name ?? "shop", level: "debug", write: (line) => logs.push(JSON.parse(line)) });
  const plugin: Record<string, unknown> = {
    database: { url: PG_URL, schema: params.schema, pool_size: 4 },
    queue: params.queue,
    ...(params.outbox ? { outbox: params.outbox } : {}),
    ...(params.kafka ? { kafka: params.kafka } : {}),
  };
  const jfast = await createJfast({
    root: params.root,
    env: {},
    logger,
    config: {
      ...(params.name ? { service: { name: params.name } } : {}),
      ...(params.plugins ? { plugins: { enabled: params.plugins } } : {}),
      plugin,
    },
    ...(params.handlers ? { handlers: params.handlers } : {}),
    ...(params.backend ? { backend: params.backend } : {}),
  });
  await jfast.start();
  const { registerReceipt } = (await import(`${params.root}/modules/receipt/tasks.ts`)) as {
    registerReceipt(outbox: Outbox, session: unknown, data: { receipt_id: string }): ReturnType<ShopApp["registerReceipt"]>;
  };
  const outbox = jfast.require<Outbox>("outbox");
  const queue = jfast.require<QueueProvider>("queue");
  return {
    jfast,
    database: jfast.require<DatabaseProvider>("database"),
    outbox,
    queue,
    backend: queue.backend,
    logs,
    async ready() {
      // /ready caches its report for a second: wait it out so each call sees the present.
      await sleep(1100);
      return (await (await jfast.fetch(new Request("http://shop.test/ready"))).json()) as Awaited<ReturnType<ShopApp["ready"]>>;
    },
    worker(concurrency = 2) {
      const worker = jfast.createWorker({ concurrency });
      worker.start();
      return worker;
    },
    registerReceipt: (session, data) => registerReceipt(outbox, session, data),
  };
}

export { copyFixture };

export interface OutboxRow {
  id: string;
  kind: string;
  destination: string;
  state: string;
  attempts: number;
  errors: Array<{ class: string; message: string; reason?: string; attempt: number }>;
}

/** The schema's outbox rows, read from outside the app. */
export function outboxRows(schema: string): Promise<OutboxRow[]> {
  return withAdmin(async (c) => (await c.query(`SELECT id, kind, destination, state, attempts, errors FROM "${schema}".jfast_outbox ORDER BY seq`)).rows);
}

/**
 * A redis-server of the test's own on a free port (the shared one on 6379 must stay up for the suites
 * running beside): stopped and started again by the test, by the PID of the process it spawned.
 */
export interface PrivateRedis {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOP: connections stay open and commands sent to it hang unanswered, until thaw() (SIGCONT). */
  freeze(): void;
  thaw(): void;
  /** One command on a short-lived connection (CONFIG SET ...). */
  command(...args: string[]): Promise<unknown>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const url = `redis://127.0.0.1:${port}`;
  const redis: PrivateRedis = {
    url,
    async start() {
      if (child) return;
      child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
      const deadline = Date.now() + 10_000;
      while (!(await ping(url))) {
        if (Date.now() > deadline) throw new Error(`redis-server did not start on port ${port}`);
        await sleep(50);
      }
    },
    async stop() {
      const running = child;
      if (!running) return;
      child = null;
      const exited = new Promise((resolve) => running.once("exit", resolve));
      running.kill("SIGKILL");
      await exited;
    },
    freeze() {
      child?.kill("SIGSTOP");
    },
    thaw() {
      child?.kill("SIGCONT");
    },
    async command(...args) {
      const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
      client.on("error", () => undefined);
      try {
        await client.connect();
        return await client.call(args[0]!, ...args.slice(1));
      } finally {
        client.disconnect();
      }
    },
  };
  await redis.start();
  return redis;
}

async function ping(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 500 });
  client.on("error", () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}
