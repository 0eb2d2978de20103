/**
 * A PostgreSQL primary and a streaming replica of the test's own on loopback: initdb a fresh primary,
 * pg_basebackup it (`-R`: the copy starts as a hot standby following the primary), both from the machine's
 * PostgreSQL binaries (`pg_config --bindir`), on free ports. The machine's own server and data are never
 * touched. Run as root (CI), the servers run as the `postgres` user, which PostgreSQL requires.
 */
import { execFile, execFileSync } from "node:child_process";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface PrivateReplicaPair {
  primaryUrl: string;
  replicaUrl: string;
  /** Stops the replica (immediate), runs `during`, and starts it again in a finally. */
  withReplicaDown<T>(during: () => Promise<T>): Promise<T>;
  destroy(): Promise<void>;
}

function binDir(): string {
  try {
    return execFileSync("pg_config", ["--bindir"], { encoding: "utf8" }).trim();
  } catch {
    throw new Error("pg_config is not on PATH: install Debian's postgresql package (it brings initdb, pg_ctl and pg_basebackup)");
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function startReplicaPair(): Promise<PrivateReplicaPair> {
  const bin = binDir();
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(path.join(tmpdir(), "jfast-replica-"));
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    chownSync(dir, uid, gid);
  }
  const as = (command: string, args: string[]) =>
    asRoot ? (["runuser", ["-u", "postgres", "--", path.join(bin, command), ...args]] as const) : ([path.join(bin, command), args] as const);
  const exec = (command: string, args: string[]) => {
    const [cmd, full] = as(command, args);
    return run(cmd, full, { timeout: 120_000 });
  };
  const primaryData = path.join(dir, "primary");
  const replicaData = path.join(dir, "replica");
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const options = (port: number) => `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c max_connections=100`;
  const start = (data: string, port: number, log: string) => exec("pg_ctl", ["-D", data, "-o", options(port), "-l", path.join(dir, log), "-w", "-t", "60", "start"]);
  const stop = (data: string) => exec("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
  const started: string[] = [];
  try {
    await exec("initdb", ["-D", primaryData, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-instructions"]);
    await start(primaryData, primaryPort, "primary.log");
    started.push(primaryData);
    await exec("pg_basebackup", ["-h", "127.0.0.1", "-p", String(primaryPort), "-U", "postgres", "-D", replicaData, "-R", "-X", "stream", "-c", "fast"]);
    await start(replicaData, replicaPort, "replica.log");
    started.push(replicaData);
  } catch (error) {
    for (const data of started.reverse()) await stop(data).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    primaryUrl: `postgres://postgres@127.0.0.1:${primaryPort}/postgres`,
    replicaUrl: `postgres://postgres@127.0.0.1:${replicaPort}/postgres`,
    async withReplicaDown(during) {
      await stop(replicaData);
      try {
        return await during();
      } finally {
        await start(replicaData, replicaPort, "replica.log");
      }
    },
    async destroy() {
      await stop(replicaData).catch(() => undefined);
      await stop(primaryData).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
