import { execFileSync } from "node:child_process";
import { connect } from "node:net";
import { fileURLToPath } from "node:url";

/**
 * Vitest's global setup: a suite stops what it started for itself. The loopback Redis Cluster and RabbitMQ cluster
 * are started by the first test file that needs them (redis-cluster-env.ts, rabbitmq-cluster-env.ts) and shared by
 * the others; once the run is over, the ones that were not running before it are stopped again. The machine's own
 * PostgreSQL, Redis and RabbitMQ are never touched.
 */
const DOCKER = fileURLToPath(new URL("../../../docker/", import.meta.url));
const CLUSTERS = [
  { name: "redis-cluster", port: Number(process.env.JFAST_REDIS_CLUSTER_PORT ?? 7001) },
  { name: "rabbitmq-cluster", port: Number(process.env.JFAST_RABBITMQ_CLUSTER_PORT ?? 5681) },
];

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    const done = (up: boolean) => {
      socket.destroy();
      resolve(up);
    };
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
    socket.setTimeout(1000, () => done(false));
  });
}

export default async function setup(): Promise<() => Promise<void>> {
  const before = await Promise.all(CLUSTERS.map((c) => answers(c.port)));
  return async () => {
    for (const [i, cluster] of CLUSTERS.entries()) {
      if (before[i] || !(await answers(cluster.port))) continue;
      execFileSync("bash", [`${DOCKER}${cluster.name}/stop.sh`], { stdio: "inherit", timeout: 120_000 });
    }
  };
}
