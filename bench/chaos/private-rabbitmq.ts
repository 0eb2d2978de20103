/**
 * A single RabbitMQ node of the chaos run's own, started from Debian's rabbitmq-server the way
 * docker/rabbitmq-cluster/node.sh starts its nodes: its own node name, AMQP and distribution ports, data, logs,
 * config and Erlang cookie in a temporary directory, no plugins. The machine's node on 5672 is never touched.
 * A kill is kill -9 of the node's VM (beam.smp, from its pid file); the restart keeps the data directory, so
 * durable queues and persistent messages come back from disk.
 */
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync, chmodSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import path from "node:path";
import { mkdtempSync } from "node:fs";
import amqp from "amqplib";
import { sleep } from "../lib/subject.js";
import { alive, freePort } from "./free-port.js";

const BIN = "/usr/lib/rabbitmq/bin";

export interface PrivateRabbitMq {
  url: string;
  kill9(downMs: number): Promise<void>;
  destroy(): Promise<void>;
}

export async function startPrivateRabbitMq(): Promise<PrivateRabbitMq> {
  const dir = mkdtempSync(path.join(tmpdir(), "jfast-chaos-rmq-"));
  const port = await freePort();
  const distPort = await freePort();
  const name = `jfast-chaos-${randomBytes(3).toString("hex")}@localhost`;
  const url = `amqp://guest:guest@127.0.0.1:${port}`;
  for (const sub of ["mnesia", "log", "home"]) mkdirSync(path.join(dir, sub), { recursive: true });
  writeFileSync(path.join(dir, "home", ".erlang.cookie"), randomBytes(16).toString("hex").toUpperCase());
  chmodSync(path.join(dir, "home", ".erlang.cookie"), 0o400);
  writeFileSync(path.join(dir, "rabbitmq.conf"), `listeners.tcp.local = 127.0.0.1:${port}\n`);
  writeFileSync(path.join(dir, "enabled_plugins"), "[].");
  writeFileSync(path.join(dir, "advanced.config"), "[].");
  const pidFile = path.join(dir, "rabbitmq.pid");
  const env = {
    ...process.env,
    HOME: path.join(dir, "home"),
    RABBITMQ_NODENAME: name,
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_MNESIA_BASE: path.join(dir, "mnesia"),
    RABBITMQ_LOG_BASE: path.join(dir, "log"),
    RABBITMQ_CONFIG_FILE: path.join(dir, "rabbitmq.conf"),
    RABBITMQ_ADVANCED_CONFIG_FILE: path.join(dir, "advanced.config"),
    RABBITMQ_ENABLED_PLUGINS_FILE: path.join(dir, "enabled_plugins"),
    RABBITMQ_PID_FILE: pidFile,
  };
  const up = async () => {
    try {
      const connection = await amqp.connect(url);
      await connection.close();
      return true;
    } catch {
      return false;
    }
  };
  const pid = () => {
    try {
      return Number(readFileSync(pidFile, "utf8").trim()) || null;
    } catch {
      return null;
    }
  };
  const start = async () => {
    // -detached: the VM outlives the script that started it; its pid lands in RABBITMQ_PID_FILE.
    const child = spawn(path.join(BIN, "rabbitmq-server"), ["-detached"], { env, cwd: dir, stdio: "ignore" });
    await new Promise((resolve) => child.once("exit", resolve));
    const deadline = Date.now() + 180_000;
    while (!(await up())) {
      if (Date.now() > deadline) throw new Error(`chaos: the private RabbitMQ node ${name} did not accept connections on ${port} within 180 s (logs in ${dir}/log)`);
      await sleep(200);
    }
  };
  await start();
  return {
    url,
    async kill9(downMs) {
      const beam = pid();
      try {
        if (beam !== null) {
          process.kill(beam, "SIGKILL");
          for (let i = 0; i < 500 && alive(beam); i++) await sleep(10);
        }
        await sleep(downMs);
      } finally {
        await start();
      }
    },
    async destroy() {
      const beam = pid();
      if (beam !== null && alive(beam)) process.kill(beam, "SIGKILL");
      await sleep(100);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
