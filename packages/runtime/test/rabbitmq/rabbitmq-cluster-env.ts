import { execFile, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const SCRIPTS = fileURLToPath(new URL("../../../../docker/rabbitmq-cluster/", import.meta.url));

/** The cluster's nodes: 1, 2, 3 (docker/rabbitmq-cluster/env.sh names them jfast-rmq-<n>@localhost). */
export const CLUSTER_NODES = [1, 2, 3] as const;
export type ClusterNode = (typeof CLUSTER_NODES)[number];

/**
 * The loopback RabbitMQ cluster (docker/rabbitmq-cluster: three nodes on 127.0.0.1:5681-5683), started by its
 * script when it is not running (the script is idempotent and takes a lock, so test files may call this at
 * once). A cluster that cannot start fails the test with the script's output; nothing is skipped. Returns the
 * `url` the script prints: the three nodes, comma-separated.
 */
export function rabbitmqCluster(): string {
  let output: string;
  try {
    output = execFileSync("bash", [`${SCRIPTS}start.sh`], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 600_000 });
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`the RabbitMQ cluster for these tests could not start (docker/rabbitmq-cluster/start.sh): ${failed.stderr || failed.stdout || failed.message}`);
  }
  return output.trim().split("\n").at(-1)!;
}

export function nodePort(node: ClusterNode): number {
  return 5680 + node;
}

export function nodeName(node: ClusterNode): string {
  return `jfast-rmq-${node}@localhost`;
}

/** Where docker/rabbitmq-cluster keeps the nodes' data and pid files: one place per machine (env.sh). */
export function clusterStateDir(): string {
  return process.env.JFAST_RABBITMQ_CLUSTER_STATE ?? path.join(process.env.TMPDIR ?? tmpdir(), "jfast-rabbitmq-cluster");
}

/** The node's Erlang VM, from the pid file the node wrote. */
export function nodePid(node: ClusterNode): number {
  return Number(readFileSync(path.join(clusterStateDir(), String(node), "rabbitmq.pid"), "utf8").trim());
}

/** SIGKILL to the node's VM (no shutdown, no goodbye to the other nodes), and waits for it to be gone. */
export async function killNode(node: ClusterNode): Promise<void> {
  const pid = nodePid(node);
  process.kill(pid, "SIGKILL");
  for (const deadline = Date.now() + 10_000; alive(pid) && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** Starts a node again (after a test killed it): it rejoins the cluster from its data directory. */
export async function startNode(node: ClusterNode): Promise<void> {
  await run("bash", [`${SCRIPTS}node.sh`, String(node)], { timeout: 300_000 });
}

/** A CLI tool of the cluster (ctl.sh: the cluster's own cookie) against one node. */
export async function clusterCtl(node: ClusterNode, tool: "rabbitmqctl" | "rabbitmq-queues", args: string[]): Promise<string> {
  const { stdout } = await run("bash", [`${SCRIPTS}ctl.sh`, String(node), tool, ...args], { timeout: 120_000 });
  return stdout;
}

/** The node that leads the quorum queue's Raft group, asked of `via` (rabbitmq-queues quorum_status). */
export async function queueLeader(queue: string, via: ClusterNode): Promise<ClusterNode> {
  const out = await clusterCtl(via, "rabbitmq-queues", ["quorum_status", queue, "--formatter", "json", "-q"]);
  const members = JSON.parse(out) as Array<Record<string, unknown>>;
  const leader = members.find((m) => String(m["Raft State"]) === "leader");
  const match = /jfast-rmq-(\d)@/.exec(String(leader?.["Node Name"] ?? ""));
  if (!match) throw new Error(`no leader in the quorum status of ${queue}: ${out}`);
  return Number(match[1]) as ClusterNode;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
