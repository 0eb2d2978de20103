/**
 * A redis-server of the chaos run's own (free port, data in a temporary directory), so that killing it with -9
 * cuts nobody else. Append-only file on; `appendfsync` is switched per scenario (CONFIG SET) between `always`
 * and `everysec`. A restart runs the same command in the same directory: Redis replays the AOF it finds.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { sleep } from "../lib/subject.js";
import { alive, freePort } from "./free-port.js";

export type Appendfsync = "always" | "everysec";

export interface PrivateRedis {
  url: string;
  setAppendfsync(mode: Appendfsync): Promise<void>;
  /** kill -9 of redis-server, started again after `downMs` (in a finally). */
  kill9(downMs: number): Promise<void>;
  destroy(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const dir = mkdtempSync(path.join(tmpdir(), "jfast-chaos-redis-"));
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let fsync: Appendfsync = "always";
  let child: ChildProcess | null = null;
  const args = () => ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "yes", "--appendfsync", fsync, "--daemonize", "no"];
  const up = async () => {
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
  };
  const start = async () => {
    child = spawn("redis-server", args(), { stdio: "ignore" });
    for (let i = 0; i < 500 && !(await up()); i++) await sleep(20);
    if (!(await up())) throw new Error(`chaos: the private redis-server on ${port} did not start`);
  };
  await start();
  return {
    url,
    async setAppendfsync(mode) {
      fsync = mode;
      const admin = new Redis(url, { maxRetriesPerRequest: 1 });
      try {
        await admin.config("SET", "appendfsync", mode);
      } finally {
        admin.disconnect();
      }
    },
    async kill9(downMs) {
      const pid = child?.pid;
      try {
        if (pid !== undefined) {
          process.kill(pid, "SIGKILL");
          for (let i = 0; i < 500 && alive(pid); i++) await sleep(10);
        }
        await sleep(downMs);
      } finally {
        await start();
      }
    },
    async destroy() {
      if (child?.pid !== undefined && alive(child.pid)) process.kill(child.pid, "SIGKILL");
      await sleep(50);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
