import type { LimitMap } from "../../core/limits.js";
import type { BrokerConnection } from "./connection.js";
import type { Consumer } from "./consumer.js";
import type { DeadLetters } from "./dead-letters.js";
import type { CascadeShape } from "./delay-key.js";
import type { QueueNames } from "./names.js";
import type { RabbitMqBackendOptions } from "./options.js";
import type { RecentIds } from "./recent-ids.js";
import type { QueueType } from "./topology.js";

/** What every operation of the RabbitMQ queue (enqueue.ts, outcomes.ts, admin.ts, maintenance.ts, repair.ts) works on. */
export interface RabbitQueue {
  readonly options: RabbitMqBackendOptions;
  readonly names: QueueNames;
  readonly shape: CascadeShape;
  readonly queueType: QueueType;
  readonly connection: BrokerConnection;
  readonly consumer: Consumer;
  readonly dead: DeadLetters;
  readonly recent: RecentIds;
  readonly connectTimeoutMs: number;
  /** Cancelled ids read from `options.cancellations`. */
  readonly cancelledIds: Set<string>;
  /** The queue's limited tasks (setLimits); their jobs take a slot in the LimitStore before they run. */
  limited: LimitMap;
  /** The pruner of this process holding the broker-side lease (the exclusive `<queue>.pruner` queue). */
  prunerOwner: string | null;
}
