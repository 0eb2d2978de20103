import type { OutboxEventBus } from "../local-events/publish-local.js";
import { JfastError } from "../errors/jfast-error.js";
import { KafkaErrorCode } from "../kafka/kafka-errors.js";
import { validateTopic } from "../kafka/on.js";
import { OutboxKind, writeOutboxRows } from "./outbox-rows.js";

/**
 * The kafka plugin as `outbox.publish` sees it: the event is written as a jfast_outbox row in the caller's
 * transaction and the relay produces it to Kafka, so it reaches the topic if and only if the transaction
 * commits. What Kafka would refuse (a bad topic, an event without a key) is refused here, inside the
 * request, rather than written as a row that could only die.
 */
export function createOutboxEventBus(params: { maxAttempts: number; channel: string }): OutboxEventBus {
  return {
    async publishWithin({ executor, topic, event }) {
      const invalid = validateTopic(topic);
      if (invalid) throw new TypeError(`outbox.publish(session, topic, event): ${invalid}`);
      if (event.key === null) {
        throw new JfastError(`event "${event.type}" published to "${topic}" has no key`, {
          code: KafkaErrorCode.eventKeyMissing,
          hint: `give it the aggregate id: new Event({ type: "${event.type}", data, key: order.id }); Kafka orders events only within a partition, and the key picks the partition`,
          docs: "jfast docs kafka#keys",
        });
      }
      await writeOutboxRows({
        executor,
        rows: [{ kind: OutboxKind.event, destination: topic, id: event.id, body: event.toJSON() }],
        maxAttempts: params.maxAttempts,
        channel: params.channel,
      });
    },
  };
}
