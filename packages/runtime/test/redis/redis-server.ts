import { execFileSync } from "node:child_process";
import { existsSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { Redis } from "ioredis";
import { sleep } from "../conformance/harness.js";
import { REDIS_URL } from "./redis-test-env.js";

/** The start command every test and CI use for the shared Redis. */
const START = ["--daemonize", "yes", "--bind", "127.0.0.1", "--port", "6379", "--save", "", "--appendonly", "no"];

async function ping(): Promise<boolean> {
  const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 500 });
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

/**
 * Stops the shared redis-server and starts it again, keeping its data: SHUTDOWN SAVE writes a snapshot, the
 * new server (same start command, same directory) loads it. Other test files running at the same time see a
 * short outage, not an empty server. The server is started again in `finally`, whatever happened; the snapshot
 * is removed afterwards (or a snapshot that was there before is put back), so later restarts start clean.
 */
export async function restartRedis(params: { downMs: number; whileDown?: () => void }): Promise<{ outageMs: number }> {
  const admin = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  admin.on("error", () => undefined);
  await admin.connect();
  const [, dir] = (await admin.config("GET", "dir")) as [string, string];
  const [, dbfilename] = (await admin.config("GET", "dbfilename")) as [string, string];
  const snapshot = path.join(dir, dbfilename);
  const backup = `${snapshot}.before-restart-test`;
  const hadSnapshot = existsSync(snapshot);
  if (hadSnapshot) renameSync(snapshot, backup);
  const stoppedAt = Date.now();
  try {
    // The server closes the connection instead of answering.
    await admin.call("SHUTDOWN", "SAVE").catch(() => undefined);
    admin.disconnect();
    for (let i = 0; i < 100 && (await ping()); i++) await sleep(20);
    if (await ping()) throw new Error("redis-server did not stop after SHUTDOWN SAVE");
    params.whileDown?.();
    await sleep(params.downMs);
  } finally {
    if (!(await ping())) execFileSync("redis-server", START, { cwd: dir, stdio: "ignore" });
    for (let i = 0; i < 250 && !(await ping()); i++) await sleep(20);
    rmSync(snapshot, { force: true });
    if (hadSnapshot) renameSync(backup, snapshot);
  }
  if (!(await ping())) throw new Error("redis-server did not come back after the restart");
  return { outageMs: Date.now() - stoppedAt };
}
