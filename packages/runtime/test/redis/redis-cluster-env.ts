import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { RedisTarget } from "./redis-test-env.js";

const SCRIPTS = fileURLToPath(new URL("../../../../docker/redis-cluster/", import.meta.url));

/**
 * The loopback Redis Cluster (docker/redis-cluster: three primaries, three replicas on 127.0.0.1:7001-7006),
 * started by its script when it is not running (the script is idempotent and takes a lock, so test files may
 * call this at once). A cluster that cannot start fails the test with the script's output; nothing is skipped.
 */
export function redisCluster(): RedisTarget {
  let output: string;
  try {
    output = execFileSync("bash", [`${SCRIPTS}start.sh`], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 });
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`the Redis Cluster for these tests could not start (docker/redis-cluster/start.sh): ${failed.stderr || failed.stdout || failed.message}`);
  }
  const url = output.trim().split("\n").at(-1)!;
  return { url, cluster: true };
}

/** Starts one node again (after a test killed it): it rejoins the cluster from its nodes.conf. */
export function startClusterNode(port: number): void {
  execFileSync("bash", [`${SCRIPTS}node.sh`, String(port)], { stdio: "ignore", timeout: 30_000 });
}

/** Where docker/redis-cluster keeps the nodes' data and pid files: one place per machine (start.sh). */
export function clusterStateDir(): string {
  return process.env.JFAST_REDIS_CLUSTER_STATE ?? path.join(tmpdir(), "jfast-redis-cluster");
}
