import { describeProtocol } from "./protocol.js";
import { describeStats } from "./stats.js";
import { describeResults } from "./results.js";
import { describeDeadlines } from "./deadlines.js";
import { describeDebounce } from "./debounce.js";
import { describeJobLife } from "./job-life.js";
import { describeWorker } from "./worker.js";
import { describePriority } from "./priority.js";
import { describeOutcomes } from "./outcomes.js";
import { describeCancellation } from "./cancellation.js";
import { describeListing } from "./listing.js";
import { describeJobUpdate } from "./job-update.js";
import { describeQueues } from "./queues.js";
import { backendQueueName } from "../../src/core/named-queue.js";
import { describeUnique } from "./unique.js";
import { describeLimits } from "./limits.js";
import { describeKeyLimits } from "./key-limits.js";
import { describeFairShare } from "./fair-share.js";
import { describeKeyedDepths } from "./keyed-depths.js";
import { describeOrderPerKey } from "./order-per-key.js";
import { createSqlLimitStore } from "../../src/queue/limit-stores.js";
import { describeRetention } from "./retention.js";
import { createSqlUniqueStore } from "../../src/queue/unique-stores.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import type { BackendFactory } from "./harness.js";
import { rabbitmqCapabilities } from "../../src/backends/rabbitmq/capabilities.js";
import { dropQueue, openBackend, uniqueQueue } from "../rabbitmq/rabbitmq-test-env.js";
import { dropSchema, openTestDatabase, uniqueSchema } from "../postgres/pg-test-env.js";
import { createSqlCancelStore } from "../../src/queue/cancel-stores.js";
import { describeWorkers } from "./workers.js";
import { createDatabaseWorkerStore } from "../../src/queue/worker-stores.js";
import { describeFlows } from "./flows.js";
import { createSqlFlowStore } from "../../src/queue/flow-stores.js";

const rabbitmq: BackendFactory = {
  name: "rabbitmq",
  // A lease that runs out is handed back to the broker, which redelivers it; allow that round trip.
  leaseSlackMs: 100,
  capabilities: rabbitmqCapabilities({ cancellations: false, uniqueKeys: false, limits: false, quorum: false }),
  async create() {
    const queue = uniqueQueue("conformance");
    const backend = await openBackend(queue);
    return {
      backend,
      async cleanup() {
        await backend.close();
        await dropQueue(queue);
      },
    };
  },
  /** The service's named queues: a broker queue each, with its own delay cascade and `.dead`. */
  async createQueues(names) {
    const base = uniqueQueue("conformance");
    const queues = names.map((name) => ({ name, queue: backendQueueName(base, name) }));
    const backends = Object.fromEntries(await Promise.all(queues.map(async (q) => [q.name, await openBackend(q.queue)] as const)));
    return {
      backends,
      async cleanup() {
        for (const backend of Object.values(backends)) await backend.close();
        for (const q of queues) await dropQueue(q.queue);
      },
    };
  },
};

describeProtocol(rabbitmq);
describeListing(rabbitmq);
describeJobUpdate(rabbitmq);
describeWorker(rabbitmq);
describePriority(rabbitmq);
describeOutcomes(rabbitmq);
describeCancellation(rabbitmq);
describeQueues(rabbitmq);
describeUnique(rabbitmq);
describeLimits(rabbitmq);
describeKeyLimits(rabbitmq);
describeFairShare(rabbitmq);
describeKeyedDepths(rabbitmq);
describeOrderPerKey(rabbitmq);
describeResults(rabbitmq);
describeDeadlines(rabbitmq);
describeDebounce(rabbitmq);
describeJobLife(rabbitmq);
describeFlows(rabbitmq);
describeWorkers(rabbitmq);

/** Cancellation again with the service's database, where RabbitMQ records cancellations (jfast_cancelled_jobs). */
describeCancellation({
  ...rabbitmq,
  name: "rabbitmq with the database",
  capabilities: rabbitmqCapabilities({ cancellations: true, uniqueKeys: false, limits: false, quorum: false }),
  async create() {
    const queue = uniqueQueue("conformance");
    const schema = uniqueSchema("rmqcancel");
    const database = await openTestDatabase({ schema });
    const backend = await openBackend(queue, { cancellations: createSqlCancelStore({ db: database.sql, queue }) });
    return {
      backend,
      async cleanup() {
        await backend.close();
        await dropQueue(queue);
        await database.close();
        await dropSchema(schema);
      },
    };
  },
});

/**
 * Unique jobs, task limits and flows with the service's database (jfast_unique_keys; jfast_task_limits,
 * jfast_task_slots; jfast_flows, jfast_flow_steps); peers as other processes.
 */
const withDatabase: BackendFactory = {
  ...rabbitmq,
  name: "rabbitmq with the database",
  capabilities: rabbitmqCapabilities({ cancellations: true, uniqueKeys: true, limits: true, flows: true, workers: true, quorum: false }),
  async create() {
    const queue = uniqueQueue("conformance");
    const schema = uniqueSchema("rmqunique");
    const database = await openTestDatabase({ schema });
    const open = async (db: typeof database) =>
      openBackend(queue, {
        cancellations: createSqlCancelStore({ db: db.sql, queue }),
        uniqueKeys: createSqlUniqueStore({ db: db.sql, queue }),
        limits: createSqlLimitStore({ db: db.sql, queue }),
        flows: createSqlFlowStore({ db: db.sql, queue }),
        workers: createDatabaseWorkerStore({ db: db.sql, queue }),
        cancelReadMs: 200,
      });
    const backend = await open(database);
    const opened: Array<{ close(): Promise<void> }> = [];
    return {
      backend,
      async peer(): Promise<QueueBackend> {
        const db = await openTestDatabase({ schema, poolSize: 1 });
        const other = await open(db);
        opened.push(other, db);
        return other;
      },
      async cleanup() {
        for (const resource of opened) await resource.close();
        await backend.close();
        await dropQueue(queue);
        await database.close();
        await dropSchema(schema);
      },
    };
  },
};
describeUnique(withDatabase);
describeLimits(withDatabase);
describeFlows(withDatabase);
describeWorkers(withDatabase);

/** Retention: only dead letters are kept; peers are other processes, each with a connection of its own. */
describeRetention({
  ...rabbitmq,
  async create() {
    const queue = uniqueQueue("conformance");
    const backend = await openBackend(queue);
    const opened: QueueBackend[] = [];
    return {
      backend,
      async peer() {
        const other = await openBackend(queue);
        opened.push(other);
        return other;
      },
      async cleanup() {
        for (const other of opened) await other.close();
        await backend.close();
        await dropQueue(queue);
      },
    };
  },
});

/** Without the database the service has no shared store (NOT_SUPPORTED); with it, jfast_stats. */
describeStats(rabbitmq, null);
describeStats({ ...rabbitmq, name: "rabbitmq with the database" }, async () => {
  const queue = uniqueQueue("stats");
  const schema = uniqueSchema("rmqstats");
  return {
    durable: true,
    async process() {
      const db = await openTestDatabase({ schema, poolSize: 1 });
      const backend = await openBackend(queue);
      return {
        backend,
        database: db,
        queue,
        async close() {
          await backend.close();
          await db.close();
        },
      };
    },
    async cleanup() {
      await dropQueue(queue);
      await dropSchema(schema);
    },
  };
});
