import { describeProtocol } from "./protocol.js";
import { describeStats } from "./stats.js";
import { dropSchema, uniqueSchema } from "../postgres/pg-test-env.js";
import { describeWorker } from "./worker.js";
import { describePriority } from "./priority.js";
import { describeOutcomes } from "./outcomes.js";
import { describeCancellation } from "./cancellation.js";
import { describeListing } from "./listing.js";
import { describeJobUpdate } from "./job-update.js";
import { describeQueues } from "./queues.js";
import { backendQueueName } from "../../src/core/named-queue.js";
import { createPostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import type { BackendFactory } from "./harness.js";
import { capabilities } from "../../src/backends/postgres/capabilities.js";
import { openTestBackend, silentLogger } from "../postgres/pg-test-env.js";
import { describeUnique } from "./unique.js";
import { describeLimits } from "./limits.js";
import { describeKeyLimits } from "./key-limits.js";
import { describeFairShare } from "./fair-share.js";
import { describeKeyedDepths } from "./keyed-depths.js";
import { describeOrderPerKey } from "./order-per-key.js";
import { describeRetention } from "./retention.js";
import { describeResults } from "./results.js";
import { describeDeadlines } from "./deadlines.js";
import { describeDebounce } from "./debounce.js";
import { describeJobLife } from "./job-life.js";
import { describeWorkers } from "./workers.js";
import { describeFlows } from "./flows.js";
import { openTestDatabase } from "../postgres/pg-test-env.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import { createSqlPauseStore } from "../../src/queue/pause-stores.js";

/** The shared suite on the real PostgreSQL server, in a fresh schema per test. */
const postgres: BackendFactory = {
  name: "postgres",
  capabilities,
  async create() {
    const { backend, cleanup, database } = await openTestBackend();
    return { backend, cleanup, pauses: createSqlPauseStore({ db: database.sql, queue: "jfast.jobs" }) };
  },
  /** The service's named queues: rows of one jfast_jobs table, each queue's under its own `queue` value. */
  async createQueues(names) {
    const { backend, cleanup, database, schema } = await openTestBackend();
    const entries = names.map((name) => {
      const queue = backendQueueName("jfast.jobs", name);
      const own = queue === "jfast.jobs" ? backend : createPostgresBackend({ db: database.sql, schema, queue, logger: silentLogger });
      return { name, queue, backend: own };
    });
    for (const e of entries) await e.backend.setup();
    return {
      backends: Object.fromEntries(entries.map((e) => [e.name, e.backend])),
      pauses: Object.fromEntries(entries.map((e) => [e.name, createSqlPauseStore({ db: database.sql, queue: e.queue })])),
      async cleanup() {
        for (const e of entries) if (e.backend !== backend) await e.backend.close();
        await cleanup();
      },
    };
  },
};

describeProtocol(postgres);
describeListing(postgres);
describeJobUpdate(postgres);
describeWorker(postgres);
describePriority(postgres);
describeOutcomes(postgres);
describeCancellation(postgres);
describeQueues(postgres);

/** Unique jobs, task limits and retention, with peers: backends on the same schema, each with a pool of its own. */
const withPeers: BackendFactory = {
  ...postgres,
  async create() {
    const { backend, cleanup, database, schema } = await openTestBackend();
    const opened: Array<{ close(): Promise<void> }> = [];
    return {
      backend,
      async peer(): Promise<QueueBackend> {
        const db = await openTestDatabase({ schema, poolSize: 1 });
        const other = createPostgresBackend({ db: db.sql, schema, queue: "jfast.jobs", logger: silentLogger });
        await other.setup();
        opened.push(other, db);
        return other;
      },
      pauses: createSqlPauseStore({ db: database.sql, queue: "jfast.jobs" }),
      async cleanup() {
        for (const resource of opened) await resource.close();
        await cleanup();
      },
    };
  },
};
describeUnique(withPeers);
describeLimits(withPeers);
describeKeyLimits(withPeers);
describeFairShare(withPeers);
describeKeyedDepths(withPeers);
describeOrderPerKey(withPeers);
describeRetention(withPeers);
describeResults(withPeers);
describeDeadlines(withPeers);
describeDebounce(withPeers);
describeJobLife(withPeers);
describeFlows(withPeers);
describeWorkers(withPeers);

/** The worker's side again with completed rows deleted instead of kept ([plugin.queue] keep_completed = false). */
describeWorker({
  ...postgres,
  name: "postgres, keep_completed = false",
  async create() {
    const { backend, cleanup, database } = await openTestBackend({ keepCompleted: false });
    return { backend, cleanup, pauses: createSqlPauseStore({ db: database.sql, queue: "jfast.jobs" }) };
  },
});

/** jfast_stats on the server; each process a backend with a pool of its own on one schema. */
describeStats(postgres, async () => {
  const schema = uniqueSchema("stats");
  return {
    durable: true,
    async process() {
      const db = await openTestDatabase({ schema, poolSize: 1 });
      const backend = createPostgresBackend({ db: db.sql, schema, queue: "jfast.jobs", logger: silentLogger });
      return {
        backend,
        database: db,
        queue: "jfast.jobs",
        async close() {
          await backend.close();
          await db.close();
        },
      };
    },
    cleanup: () => dropSchema(schema),
  };
});
