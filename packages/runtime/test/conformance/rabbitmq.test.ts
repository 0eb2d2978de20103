import { describeProtocol } from "./protocol.js";
import { describeWorker } from "./worker.js";
import { describePriority } from "./priority.js";
import { describeOutcomes } from "./outcomes.js";
import { describeCancellation } from "./cancellation.js";
import { describeListing } from "./listing.js";
import type { BackendFactory } from "./harness.js";
import { dropQueue, openBackend, uniqueQueue } from "../rabbitmq/rabbitmq-test-env.js";
import { dropSchema, openTestDatabase, uniqueSchema } from "../postgres/pg-test-env.js";
import { createSqlCancelStore } from "../../src/queue/cancel-stores.js";

const rabbitmq: BackendFactory = {
  name: "rabbitmq",
  // A lease that runs out is handed back to the broker, which redelivers it; allow that round trip.
  leaseSlackMs: 100,
  perTaskDepths: false,
  cancellation: false,
  listableStates: ["dead"],
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
};

describeProtocol(rabbitmq);
describeListing(rabbitmq);
describeWorker(rabbitmq);
describePriority(rabbitmq);
describeOutcomes(rabbitmq);
describeCancellation(rabbitmq);

/** Cancellation again with the service's database, where RabbitMQ records cancellations (jfast_cancelled_jobs). */
describeCancellation({
  ...rabbitmq,
  name: "rabbitmq with the database",
  cancellation: "recorded",
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
