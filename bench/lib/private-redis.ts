/**
 * A redis-server of the bench's own, for the rows with persistence: started per run on a free port in a temp
 * dir with an append-only file fsynced every second, stopped by its PID. The shared Redis stays as it is.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { freePort } from "../chaos/free-port.js";
import { sleep, type Subject } from "./subject.js";

export const AOF_ARGS = ["--appendonly", "yes", "--appendfsync", "everysec"] as const;

/** A subject made for a private Redis once it runs (its URL is known only then), and that server stopped with it. */
export function onPrivateRedis(make: (url: string) => Subject): Subject {
  let server: PrivateRedis | null = null;
  let inner: Subject | null = null;
  const the = () => {
    if (!inner) throw new Error("the subject on a private Redis is used before its setup");
    return inner;
  };
  return {
    get label() {
      return the().label;
    },
    get settings() {
      return the().settings;
    },
    async setup() {
      server = await startPrivateRedis();
      try {
        inner = make(server.url);
        await inner.setup();
      } catch (error) {
        await server.stop();
        server = null;
        throw error;
      }
    },
    enqueue: (count) => the().enqueue(count),
    drain: (count, concurrency) => the().drain(count, concurrency),
    startIdle: () => the().startIdle(),
    enqueueOne: () => the().enqueueOne(),
    get enqueueOneElsewhere() {
      const subject = the();
      return subject.enqueueOneElsewhere ? () => subject.enqueueOneElsewhere!() : undefined;
    },
    stopIdle: () => the().stopIdle(),
    async teardown() {
      try {
        await inner?.teardown();
      } finally {
        await server?.stop();
        server = null;
      }
    },
  };
}

export interface PrivateRedis {
  url: string;
  stop(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const dir = await mkdtemp(path.join(tmpdir(), "jfast-bench-redis-"));
  const port = await freePort();
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", ...AOF_ARGS], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    try {
      await stopChild(child, exited);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
  const url = `redis://127.0.0.1:${port}`;
  try {
    await waitReady(url, child);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, stop };
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  process.kill(child.pid, "SIGTERM");
  const killed = await Promise.race([exited.then(() => true), sleep(5000).then(() => false)]);
  if (!killed) {
    process.kill(child.pid, "SIGKILL");
    await exited;
  }
}

async function waitReady(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode} before it answered`);
    const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    try {
      await redis.connect();
      if ((await redis.ping()) === "PONG") return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`redis-server on ${url} did not answer within 10 s: ${(error as Error).message}`);
    } finally {
      redis.disconnect();
    }
    await sleep(50);
  }
}
