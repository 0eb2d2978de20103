import { configDefaults, defineConfig } from "vitest/config";

const INCLUDE = ["src/**/*.test.ts", "test/**/*.test.ts"];
/**
 * The files that kill a node of the shared loopback clusters (test/rabbitmq/rabbitmq-cluster-env.ts,
 * test/redis/redis-cluster-env.ts): run one at a time once every other file is done, so no conformance suite on the
 * same cluster sees a node they killed.
 */
const CLUSTER_NODE_FAULTS = ["test/rabbitmq/cluster-kill.test.ts", "test/redis/cluster-failover.test.ts"];

export default defineConfig({
  test: {
    // The loopback clusters a run starts for itself are stopped when it ends (test/stop-started-clusters.ts).
    globalSetup: ["test/stop-started-clusters.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: "runtime",
          include: INCLUDE,
          exclude: [...configDefaults.exclude, ...CLUSTER_NODE_FAULTS],
          // Service-backed suites isolate themselves by namespace; files run in parallel on 2 cores.
          fileParallelism: true,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "cluster-node-faults",
          include: CLUSTER_NODE_FAULTS,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
