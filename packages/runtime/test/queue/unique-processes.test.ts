import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { openTestBackend, dropSchema, openTestDatabase, uniqueSchema } from "../postgres/pg-test-env.js";
import { dropQueue as dropRedisQueue, openBackend as openRedis, REDIS_URL, uniqueQueue as redisQueue } from "../redis/redis-test-env.js";
import { AMQP_URL, dropQueue as dropRabbitQueue, openBackend as openRabbit, uniqueQueue as rabbitQueue } from "../rabbitmq/rabbitmq-test-env.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/unique-enqueuer.ts", import.meta.url));
const PROCESSES = 4;
const PER_PROCESS = 5;

interface Outcome {
  id: string;
  inserted: string[];
  holder: string | null;
}

/** Starts the enqueuers, lets them all go at once, and collects what each enqueue answered. */
async function race(settings: Record<string, unknown>): Promise<Outcome[]> {
  const children = Array.from({ length: PROCESSES }, () =>
    spawn(process.execPath, ["--import", "tsx", FIXTURE, JSON.stringify({ ...settings, count: PER_PROCESS })], { stdio: ["pipe", "pipe", "pipe"] }),
  );
  try {
    const lines = children.map((child) => {
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const queue: Array<Record<string, unknown>> = [];
      const waiters: Array<() => void> = [];
      createInterface({ input: child.stdout }).on("line", (text) => {
        queue.push(JSON.parse(text) as Record<string, unknown>);
        waiters.splice(0).forEach((w) => w());
      });
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      return async (): Promise<Record<string, unknown>> => {
        for (;;) {
          const line = queue.shift();
          if (line) return line;
          const more = new Promise<void>((resolve) => waiters.push(resolve));
          await Promise.race([more, exited.then(() => Promise.reject(new Error(`enqueuer exited: ${stderr}`)))]).catch((error: unknown) => {
            if (queue.length === 0) throw error;
          });
        }
      };
    });
    for (const next of lines) expect(await next()).toEqual({ ready: true });
    for (const child of children) child.stdin.write("go\n");
    const outcomes: Outcome[] = [];
    for (const next of lines) outcomes.push(...((await next()).results as Outcome[]));
    return outcomes;
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  }
}

/** Twenty enqueues of one key from four processes at once make exactly one job, the others its duplicates. */
async function expectOneJob(outcomes: Outcome[], backend: QueueBackend): Promise<void> {
  expect(outcomes).toHaveLength(PROCESSES * PER_PROCESS);
  const inserted = outcomes.flatMap((o) => o.inserted);
  expect(inserted).toHaveLength(1);
  for (const outcome of outcomes) if (outcome.inserted.length === 0) expect(outcome.holder).toBe(inserted[0]);
  const depths = await backend.depths();
  expect(depths.ready + depths.scheduled).toBe(1);
}

describe("unique jobs across processes", () => {
  it("PostgreSQL: one job of twenty enqueued from four processes", async () => {
    const { backend, cleanup, schema } = await openTestBackend();
    try {
      await expectOneJob(await race({ backend: "postgres", schema, queue: "jfast.jobs", key: "race", url: "" }), backend);
    } finally {
      await cleanup();
    }
  }, 240_000);

  it("Redis: one job of twenty enqueued from four processes", async () => {
    const queue = redisQueue("unique-race");
    const backend = await openRedis(queue);
    try {
      await expectOneJob(await race({ backend: "redis", url: REDIS_URL, queue, schema: "", key: "race" }), backend);
    } finally {
      await backend.close();
      await dropRedisQueue(queue);
    }
  }, 240_000);

  it("RabbitMQ with the database: one job of twenty enqueued from four processes", async () => {
    const queue = rabbitQueue("unique-race");
    const schema = uniqueSchema("rmqrace");
    const database = await openTestDatabase({ schema });
    const backend = await openRabbit(queue);
    try {
      await expectOneJob(await race({ backend: "rabbitmq", url: AMQP_URL, queue, schema, key: "race" }), backend);
    } finally {
      await backend.close();
      await dropRabbitQueue(queue);
      await database.close();
      await dropSchema(schema);
    }
  }, 240_000);
});
