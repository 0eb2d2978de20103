/**
 * A PostgreSQL server of the chaos run's own, so that the PostgreSQL backend's "broker restart" can really
 * restart its server without cutting the shared server every other suite uses. Same binaries as the machine's
 * cluster (initdb/pg_ctl from `pg_config --bindir`), a fresh data directory, trust auth on 127.0.0.1, a free
 * port; fsync stays on, so a stop in `immediate` mode (no shutdown checkpoint: crash recovery at the next start)
 * keeps every committed transaction, as a real crash would.
 *
 * Run as root (CI), the server runs as the `postgres` user, which PostgreSQL requires.
 */
import { execFile, execFileSync } from "node:child_process";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort } from "./free-port.js";

const run = promisify(execFile);

export interface PrivatePostgres {
  url: string;
  /** Stops the server (`immediate`: like a crash) and starts it again after `downMs`; always started in a finally. */
  restart(downMs: number): Promise<void>;
  destroy(): Promise<void>;
}

function binDir(): string {
  try {
    return execFileSync("pg_config", ["--bindir"], { encoding: "utf8" }).trim();
  } catch {
    throw new Error("chaos: pg_config is not on PATH; install the PostgreSQL server package (it brings initdb and pg_ctl)");
  }
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(path.join(tmpdir(), "jfast-chaos-pg-"));
  const data = path.join(dir, "data");
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    chownSync(dir, uid, gid);
  }
  const as = (command: string, args: string[]) =>
    asRoot ? ["runuser", ["-u", "postgres", "--", path.join(bin, command), ...args]] as const : [path.join(bin, command), args] as const;
  const port = await freePort();
  const [initCmd, initArgs] = as("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-instructions"]);
  await run(initCmd, initArgs, { timeout: 120_000 });
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c max_connections=200`;
  const pgCtl = (args: string[]) => {
    const [cmd, full] = as("pg_ctl", ["-D", data, ...args]);
    return run(cmd, full, { timeout: 120_000 });
  };
  const start = () => pgCtl(["-o", options, "-l", path.join(dir, "server.log"), "-w", "-t", "60", "start"]);
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async restart(downMs) {
      try {
        await pgCtl(["-m", "immediate", "-w", "stop"]);
        await new Promise((r) => setTimeout(r, downMs));
      } finally {
        await start();
      }
    },
    async destroy() {
      await pgCtl(["-m", "immediate", "-w", "stop"]).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
