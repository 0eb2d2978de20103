/**
 * The chaos run's RabbitMQ cluster part: the loopback three-node cluster of docker/rabbitmq-cluster (started
 * when it is not running; the script is idempotent), quorum queues, and a node killed with -9 instead of the
 * single broker's stop_app. The shared broker on 5672 is never touched.
 */
import { execFile, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { sleep } from "../lib/subject.js";

const run = promisify(execFile);
const SCRIPTS = new URL("../../docker/rabbitmq-cluster/", import.meta.url).pathname;

let url: string | null = null;

/** The cluster's `url` (its three nodes, comma-separated), starting it first if needed. */
export function rabbitmqClusterUrl(): string {
  url ??= execFileSync("bash", [`${SCRIPTS}start.sh`], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 600_000 }).trim().split("\n").at(-1)!;
  return url;
}

/** The first node's URL: any node serves every queue (for cleanup and hand-made messages). */
export function rabbitmqClusterFirstUrl(): string {
  return rabbitmqClusterUrl().split(",")[0]!;
}

/**
 * kill -9 node 1 — the first URL of the list, so the node every process of the run is connected to and the
 * leader of the queues the parent declared through it — then start it again after `downMs` (in a finally).
 */
export async function killRabbitMqNode(downMs: number): Promise<void> {
  const state = process.env.JFAST_RABBITMQ_CLUSTER_STATE ?? path.join(process.env.TMPDIR ?? tmpdir(), "jfast-rabbitmq-cluster");
  const pid = Number(readFileSync(path.join(state, "1", "rabbitmq.pid"), "utf8").trim());
  try {
    process.kill(pid, "SIGKILL");
    for (let i = 0; i < 500 && alive(pid); i++) await sleep(20);
    await sleep(downMs);
  } finally {
    await run("bash", [`${SCRIPTS}node.sh`, "1"], { timeout: 300_000 });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
