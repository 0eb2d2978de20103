import { describeProtocol } from "./protocol.js";
import { describeWorker } from "./worker.js";
import { describeOutcomes } from "./outcomes.js";
import { describeCancellation } from "./cancellation.js";
import type { BackendFactory } from "./harness.js";
import { dropQueue, openBackend, uniqueQueue } from "../rabbitmq/rabbitmq-test-env.js";

const rabbitmq: BackendFactory = {
  name: "rabbitmq",
  // A lease that runs out is handed back to the broker, which redelivers it; allow that round trip.
  leaseSlackMs: 100,
  perTaskDepths: false,
  cancellation: false,
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
describeWorker(rabbitmq);
describeOutcomes(rabbitmq);
describeCancellation(rabbitmq);
