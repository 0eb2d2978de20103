import { configDefaults, defineConfig } from "vitest/config";

/** Pure logic beside its source (STYLE.md 9): no service, no process-wide state. */
const UNIT = ["src/**/*.test.ts"];
/** Anything touching a service. */
const SERVICE = ["test/**/*.test.ts"];
/**
 * The files that kill a node of the shared loopback clusters (test/rabbitmq/rabbitmq-cluster-env.ts,
 * test/redis/redis-cluster-env.ts): they run once every other file that uses a cluster is done, so no conformance
 * suite on the same cluster sees a node they killed. Each kills a node of a different cluster, so they may run
 * side by side.
 */
const CLUSTER_NODE_FAULTS = ["test/rabbitmq/cluster-kill.test.ts", "test/redis/cluster-failover.test.ts"];

export default defineConfig({
  test: {
    // The loopback clusters the tests start for themselves are stopped when the last run using them ends
    // (test/stop-started-clusters.ts).
    globalSetup: ["test/stop-started-clusters.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two workers in every group (files run in parallel on 2 cores; each service-backed test has its own namespace).
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: "runtime",
          include: SERVICE,
          exclude: [...configDefaults.exclude, ...CLUSTER_NODE_FAULTS],
          // Each file in a fresh module graph: service-backed files start apps, servers and replicas of their own, and
          // one left a module-level state that made another file's admin call fail when they shared a process (seen
          // once in CI on Node 24, test/postgres/read-replica.test.ts). The pure unit files below share one.
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "cluster-node-faults",
          include: CLUSTER_NODE_FAULTS,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          // Beside the node faults, which leave a worker free for most of their minute.
          name: "unit",
          include: UNIT,
          isolate: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
