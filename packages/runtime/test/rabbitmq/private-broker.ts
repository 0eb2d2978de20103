import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, readdir, rm, writeFile, mkdir } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * A RabbitMQ node of its own (same installation as the shared broker, its own name, ports and data directory),
 * for tests that stop and start the broker: stopping the shared one would break every suite running beside.
 */
export interface PrivateBroker {
  url: string;
  node: string;
  /** `rabbitmqctl stop_app`: the node stays up, the broker application (and every connection) goes down. */
  stopApp(): Promise<void>;
  startApp(): Promise<void>;
  /** Stops the node by its PID and deletes its data. */
  shutdown(): Promise<void>;
}

export async function startPrivateBroker(): Promise<PrivateBroker> {
  // A node can fail to boot on a loaded machine (a port taken between choosing and binding it, a slow Erlang
  // start): each try gets fresh ports, name and directory, and a failed one is stopped and its log kept in
  // the error.
  const errors: string[] = [];
  for (let attempt = 1; attempt <= 3; attempt++) {
    try {
      return await bootPrivateBroker();
    } catch (error) {
      errors.push(`try ${attempt}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  throw new Error(`a private RabbitMQ node did not start in three tries:\n${errors.join("\n")}`);
}

async function bootPrivateBroker(): Promise<PrivateBroker> {
  const [port, distPort] = [await freePort(), await freePort()];
  const node = `jfast-test-${randomUUID().slice(0, 8)}@localhost`;
  const dir = await mkdtemp(join(tmpdir(), "jfast-rabbitmq-"));
  await mkdir(join(dir, "mnesia"));
  await mkdir(join(dir, "log"));
  await writeFile(join(dir, "rabbitmq.conf"), `listeners.tcp.local = 127.0.0.1:${port}\n`);
  await writeFile(join(dir, "enabled_plugins"), "[].\n");
  // The server script runs the node as the rabbitmq user.
  await run("chown", ["-R", "rabbitmq:rabbitmq", dir]);
  const pidFile = join(dir, "pid");
  const env = {
    ...process.env,
    RABBITMQ_NODENAME: node,
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_MNESIA_BASE: join(dir, "mnesia"),
    RABBITMQ_LOG_BASE: join(dir, "log"),
    RABBITMQ_CONFIG_FILE: join(dir, "rabbitmq.conf"),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, "enabled_plugins"),
    RABBITMQ_PID_FILE: pidFile,
  };
  await run("rabbitmq-server", ["-detached"], { env, timeout: 60_000 });
  try {
    await run("rabbitmqctl", ["-n", node, "wait", pidFile, "--timeout", "90"], { timeout: 120_000 });
  } catch (error) {
    const log = await readLogTail(join(dir, "log"));
    const pid = Number((await readFile(pidFile, "utf8").catch(() => "")).trim());
    if (pid > 0) await stopPid(pid);
    await run("pkill", ["-KILL", "-f", node.split("@")[0]!]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${log}`);
  }
  const pid = Number((await readFile(pidFile, "utf8")).trim());
  const ctl = (command: string) => run("rabbitmqctl", ["-n", node, command], { timeout: 60_000 }).then(() => undefined);
  return {
    url: `amqp://guest:guest@127.0.0.1:${port}`,
    node,
    stopApp: () => ctl("stop_app"),
    startApp: () => ctl("start_app"),
    async shutdown() {
      await stopPid(pid);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function stopPid(pid: number): Promise<void> {
  if (!alive(pid)) return;
  process.kill(pid, "SIGTERM");
  const deadline = Date.now() + 30_000;
  while (alive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
  if (alive(pid)) process.kill(pid, "SIGKILL");
}

async function readLogTail(logDir: string): Promise<string> {
  const names = await readdir(logDir).catch(() => [] as string[]);
  const parts = await Promise.all(
    names.map(async (name) => `--- ${name}\n${(await readFile(join(logDir, name), "utf8").catch(() => "")).slice(-2_000)}`),
  );
  return parts.join("\n");
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}
