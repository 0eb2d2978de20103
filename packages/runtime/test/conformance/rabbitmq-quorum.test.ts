import { describeProtocol } from "./protocol.js";
import { describeResults } from "./results.js";
import { describeWorker } from "./worker.js";
import { describeOutcomes } from "./outcomes.js";
import { describeCancellation } from "./cancellation.js";
import type { BackendFactory } from "./harness.js";
import { rabbitmqCapabilities } from "../../src/backends/rabbitmq/capabilities.js";
import { AMQP_URL, dropQueue, openBackend, uniqueQueue } from "../rabbitmq/rabbitmq-test-env.js";
import { rabbitmqCluster } from "../rabbitmq/rabbitmq-cluster-env.js";
import { QueueType } from "../../src/backends/rabbitmq/topology.js";

/**
 * The conformance suite on quorum queues ([plugin.queue] queue_type = "quorum"): on the three-node loopback
 * cluster (docker/rabbitmq-cluster, started here when it is not running), with the backend given all three
 * nodes' URLs as a service would be; and the protocol once more on the machine's single node, where a quorum
 * queue is a Raft group of one. The cascade has 10 levels (102 s; the suite's longest delay is 60 s): each
 * quorum queue is a Raft group started on every node, and 25 levels per case made the suite several times
 * slower on a shared two-core machine. Longer delays take the cascade's overflow path, as they do at 25 levels.
 */
const LEVELS = 10;
const cluster = rabbitmqCluster();

function quorumOn(url: string, name: string): BackendFactory {
  return {
    name,
    // A lease that runs out is handed back to the broker, which redelivers it; allow that round trip.
    leaseSlackMs: 100,
    capabilities: rabbitmqCapabilities({ cancellations: false, uniqueKeys: false, limits: false, quorum: true }),
    async create() {
      const queue = uniqueQueue("quorum");
      const backend = await openBackend(queue, { url, queueType: QueueType.quorum, delay: { levels: LEVELS } });
      return {
        backend,
        async cleanup() {
          await backend.close();
          await dropQueue(queue, LEVELS, url);
        },
      };
    },
  };
}

const onCluster = quorumOn(cluster, "rabbitmq quorum (3-node cluster)");
describeProtocol(onCluster);
describeWorker(onCluster);
describeOutcomes(onCluster);
describeCancellation(onCluster);
describeResults(onCluster);

describeProtocol(quorumOn(AMQP_URL, "rabbitmq quorum (one node)"));
