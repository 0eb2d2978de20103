/**
 * Restarts the shared brokers mid-run and always starts them again (finally), with the start commands every
 * test and CI use. Other suites running at the same time see a short outage, not a lost server.
 */
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { services, sleep } from "../lib/subject.js";

const run = promisify(execFile);
const REDIS_START = ["--daemonize", "yes", "--bind", "127.0.0.1", "--port", "6379", "--save", "", "--appendonly", "no"];

async function redisUp(): Promise<boolean> {
  const client = new Redis(services.redis, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 500 });
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

/** SHUTDOWN SAVE, then the same start command in the same directory: the data survives, as on a real restart. */
export async function restartRedis(downMs: number): Promise<void> {
  const admin = new Redis(services.redis, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  admin.on("error", () => undefined);
  await admin.connect();
  const [, dir] = (await admin.config("GET", "dir")) as [string, string];
  try {
    await admin.call("SHUTDOWN", "SAVE").catch(() => undefined);
    admin.disconnect();
    for (let i = 0; i < 100 && (await redisUp()); i++) await sleep(20);
    await sleep(downMs);
  } finally {
    if (!(await redisUp())) execFileSync("redis-server", REDIS_START, { cwd: dir, stdio: "ignore" });
    for (let i = 0; i < 250 && !(await redisUp()); i++) await sleep(20);
  }
  if (!(await redisUp())) throw new Error("redis-server did not come back after the restart");
}

/** stop_app/start_app: the node stays, every connection drops, durable queues and persistent messages survive. */
export async function restartRabbitMq(downMs: number): Promise<void> {
  try {
    await run("rabbitmqctl", ["stop_app"], { timeout: 120_000 });
    await sleep(downMs);
  } finally {
    await run("rabbitmqctl", ["start_app"], { timeout: 120_000 });
    await run("rabbitmqctl", ["await_startup"], { timeout: 120_000 }).catch(() => undefined);
  }
}
