import type { Event } from "../core/event.js";
import type { FlowPlan } from "../core/flow.js";
import type { Job } from "../core/job.js";
import type { JfastConfig } from "../config/load-config.js";
import type { DatabaseProvider } from "../database/database-provider.js";
import type { EventsBus } from "../kafka/events-bus.js";
import type { Logger } from "../observability/logger.js";
import { groupByQueue, type QueueProvider } from "../queue/queue-provider.js";
import { outboxChannel } from "./channel.js";
import { OutboxRelay } from "./relay.js";

/**
 * Starts this process's relay (every process that calls jfast.start() with the outbox plugin runs one). It
 * delivers to this process's queue backend and event bus: whichever process relays a row, a job lands in
 * the shared queue and an event in the shared Kafka topic.
 */
export async function startOutboxRelay(params: {
  database: DatabaseProvider;
  config: JfastConfig;
  logger: Logger;
  queue: () => QueueProvider | null;
  events: () => EventsBus | null;
}): Promise<OutboxRelay> {
  const outbox = params.config.outbox!;
  const relay = new OutboxRelay({
    db: params.database.sql,
    channel: outboxChannel(params.database.schema),
    logger: params.logger,
    pollIntervalMs: outbox.pollIntervalMs,
    backoffBaseMs: outbox.backoffBaseMs,
    sendTimeoutMs: outbox.sendTimeoutMs,
    retentionMs: outbox.retentionMs,
    destinations: {
      queue() {
        const queue = params.queue();
        // Enqueue of an id the backend already holds is a no-op (the QueueBackend protocol): a row sent
        // twice (a retry after a timeout, a relay that vanished mid-send) is one job where the backend can tell.
        // The row names the service's queue; each job goes to its task's named queue (docs/queues.md).
        if (!queue) return null;
        return {
          name: queue.name,
          enqueue: (jobs: Job[]) => (queue.queues.size === 1 ? queue.backend.enqueue({ jobs }) : enqueueByQueue(queue, jobs)),
          // A flow's steps all go to one named queue (queue/flows.ts); a flow id the backend holds is a no-op.
          enqueueFlow: (flow: FlowPlan) => queue.queueOf(flow.steps[0]!.job.task).backend.enqueueFlow({ flow }),
        };
      },
      bus() {
        const events = params.events();
        return events ? { publish: (topic: string, list: Event[]) => events.publish(topic, list) } : null;
      },
    },
  });
  await relay.start();
  return relay;
}

async function enqueueByQueue(queue: QueueProvider, jobs: Job[]): Promise<void> {
  await Promise.all([...groupByQueue(jobs, queue.queueOf)].map(([named, group]) => named.backend.enqueue({ jobs: group })));
}
