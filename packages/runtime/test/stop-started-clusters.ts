import { beginRun, endRun } from "../scripts/test-clusters.mjs";

/**
 * Vitest's global setup: a suite stops what it started for itself. The loopback Redis Cluster and RabbitMQ cluster
 * are started by the first test file that needs them (redis-cluster-env.ts, rabbitmq-cluster-env.ts) and shared by
 * the others; once the last test run using them is over (this one, another run on the machine, or npm test's `hold`
 * around both Node runs), the ones the tests started are stopped again (scripts/test-clusters.mjs). The machine's
 * own PostgreSQL, Redis and RabbitMQ are never touched.
 */
export default async function setup(): Promise<() => Promise<void>> {
  await beginRun();
  return () => endRun();
}
